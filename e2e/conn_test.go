package e2e

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// withConnCmds adds the connection tests' commands, tlscerts and
// fakeredis, to p.
func withConnCmds(p testscript.Params) testscript.Params {
	p.Cmds["tlscerts"] = cmdTLSCerts
	p.Cmds["fakeredis"] = cmdFakeRedis
	return p
}

// cmdTLSCerts writes a test CA and certificates signed by it into DIR:
// ca.pem, server.pem/server.key (for localhost and 127.0.0.1) and
// client.pem/client.key.
//
//	tlscerts $WORK/tls
func cmdTLSCerts(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: tlscerts DIR")
	}
	if err := WriteTestCerts(ts.MkAbs(args[0])); err != nil {
		ts.Fatalf("tlscerts: %v", err)
	}
}

// WriteTestCerts writes a CA and a server and a client certificate signed
// by it into dir, as PEM files.
func WriteTestCerts(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	ca := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "chatq test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		return err
	}
	if err := writePEM(filepath.Join(dir, "ca.pem"), "CERTIFICATE", caDER); err != nil {
		return err
	}
	ca, _ = x509.ParseCertificate(caDER)
	leaf := func(name string, serial int64, usage x509.ExtKeyUsage, hosts bool) error {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return err
		}
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: name},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
		}
		if hosts {
			tmpl.DNSNames = []string{"localhost"}
			tmpl.IPAddresses = []net.IP{net.ParseIP("127.0.0.1")}
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			return err
		}
		kder, err := x509.MarshalECPrivateKey(key)
		if err != nil {
			return err
		}
		if err := writePEM(filepath.Join(dir, name+".pem"), "CERTIFICATE", der); err != nil {
			return err
		}
		return writePEM(filepath.Join(dir, name+".key"), "EC PRIVATE KEY", kder)
	}
	if err := leaf("server", 2, x509.ExtKeyUsageServerAuth, true); err != nil {
		return err
	}
	return leaf("client", 3, x509.ExtKeyUsageClientAuth, false)
}

func writePEM(path, typ string, der []byte) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600)
}

// cmdFakeRedis starts a tiny fake server for the failures a real one is
// impractical for, and sets $VAR to its address:
//
//	fakeredis VAR silent                 accepts, never answers
//	fakeredis VAR close                  accepts and closes at once
//	fakeredis VAR reply [key=value…]     answers HELLO and PING, and every
//	                                     other command with error=MSG
//
// reply's keys: mode= and role= (HELLO's fields, default standalone and
// master), helloerror=MSG (HELLO and AUTH fail with MSG), error=MSG, and
// tls=DIR (TLS with DIR's server certificate; clientauth=1 requires a
// client certificate signed by DIR's CA). With mode=sentinel, SENTINEL
// MASTERS names one master, "main".
func cmdFakeRedis(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: fakeredis VAR silent|close|reply [key=value...]")
	}
	opts := map[string]string{"mode": "standalone", "role": "master", "error": "ERR unknown command"}
	for _, kv := range args[2:] {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			ts.Fatalf("fakeredis: bad option %q", kv)
		}
		opts[k] = v
	}
	var l net.Listener
	var err error
	l, err = net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		ts.Fatalf("fakeredis: %v", err)
	}
	if dir := opts["tls"]; dir != "" {
		dir = ts.MkAbs(dir)
		cert, err := tls.LoadX509KeyPair(filepath.Join(dir, "server.pem"), filepath.Join(dir, "server.key"))
		if err != nil {
			ts.Fatalf("fakeredis: %v", err)
		}
		tc := &tls.Config{Certificates: []tls.Certificate{cert}}
		if opts["clientauth"] == "1" {
			pool := x509.NewCertPool()
			pem, err := os.ReadFile(filepath.Join(dir, "ca.pem"))
			if err != nil {
				ts.Fatalf("fakeredis: %v", err)
			}
			pool.AppendCertsFromPEM(pem)
			tc.ClientCAs = pool
			tc.ClientAuth = tls.RequireAndVerifyClientCert
		}
		l = tls.NewListener(l, tc)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	ts.Defer(func() {
		l.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				switch args[1] {
				case "silent":
					_, _ = io.Copy(io.Discard, c)
				case "close":
				case "reply":
					serveFake(c, opts)
				}
			}()
		}
	}()
	ts.Setenv(args[0], l.Addr().String())
}

// serveFake answers RESP commands on c as opts describe.
func serveFake(c net.Conn, opts map[string]string) {
	r := bufio.NewReader(c)
	for {
		cmd, err := readCommand(r)
		if err != nil {
			return
		}
		if len(cmd) == 0 {
			continue
		}
		var reply string
		switch name := strings.ToLower(cmd[0]); {
		case (name == "hello" || name == "auth") && opts["helloerror"] != "":
			reply = "-" + opts["helloerror"] + "\r\n"
		case name == "hello":
			fields := [][2]string{{"server", "redis"}, {"version", "7.0.15"}, {"mode", opts["mode"]}, {"role", opts["role"]}}
			reply = fmt.Sprintf("%%%d\r\n", len(fields)+1)
			for _, f := range fields {
				reply += bulk(f[0]) + bulk(f[1])
			}
			reply += bulk("proto") + ":3\r\n"
		case name == "ping":
			reply = "+PONG\r\n"
		case name == "sentinel" && opts["mode"] == "sentinel" && len(cmd) > 1 && strings.EqualFold(cmd[1], "masters"):
			reply = "*1\r\n%2\r\n" + bulk("name") + bulk("main") + bulk("ip") + bulk("127.0.0.1")
		default:
			reply = "-" + opts["error"] + "\r\n"
		}
		if _, err := io.WriteString(c, reply); err != nil {
			return
		}
	}
}

func bulk(s string) string { return "$" + strconv.Itoa(len(s)) + "\r\n" + s + "\r\n" }

// readCommand reads one RESP array of bulk strings; other input is skipped
// a line at a time.
func readCommand(r *bufio.Reader) ([]string, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	if !strings.HasPrefix(line, "*") {
		return nil, nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(line[1:]))
	if err != nil {
		return nil, nil
	}
	out := make([]string, 0, n)
	for i := 0; i < n; i++ {
		hdr, err := r.ReadString('\n')
		if err != nil {
			return nil, err
		}
		size, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(hdr, "$")))
		if err != nil || size < 0 {
			return nil, fmt.Errorf("bad bulk header %q", hdr)
		}
		buf := make([]byte, size+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil, err
		}
		out = append(out, string(buf[:size]))
	}
	return out, nil
}
