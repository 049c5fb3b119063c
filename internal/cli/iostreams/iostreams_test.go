package iostreams

import (
	"os"
	"testing"

	"github.com/creack/pty"
)

// A terminal is what the terminal driver answers for: /dev/null, a
// character device, is not one; a pseudo-terminal is.
func TestIsTerminal(t *testing.T) {
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	if IsTerminal(null) {
		t.Errorf("%s is a terminal", os.DevNull)
	}
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skip("no pseudo-terminal:", err)
	}
	defer ptmx.Close()
	defer tty.Close()
	if !IsTerminal(tty) {
		t.Errorf("a pseudo-terminal is not a terminal")
	}
}
