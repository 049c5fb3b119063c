package conn

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/chatq-dev/chatq/internal/cli/clierr"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"
)

// ConfigError is a bad configuration: a config file that cannot be read, an
// unknown key, or a value that does not parse, wherever it was given. It
// is a refusal (clierr.Refused): exit 2, but no command usage line, as
// the mistake is not in how the command was called.
type ConfigError struct{ err error }

func (e *ConfigError) Error() string { return e.err.Error() }
func (e *ConfigError) Unwrap() error { return e.err }

// configErr makes a ConfigError (exit 2) with a hint.
func configErr(hint, format string, a ...any) error {
	return &ConfigError{withHint(clierr.Refusedf(format, a...), hint)}
}

// configProblem is a setting whose value does not parse; the configuration
// uses the default instead, and `chatq config` shows the value given.
type configProblem struct {
	key, raw string
	err      error
}

// checkValues parses every bool, duration and enumerated setting strictly
// (viper would read "yes" as false and "5" as 5ns), names where each bad
// value came from (flag, variable, or file and key) with a valid example,
// and sets the key back to its default so that the rest of the
// configuration stays usable by the commands that tolerate it (version,
// config, completion).
func checkValues(v *viper.Viper, flags *pflag.FlagSet, getenv func(string) string, file string) []configProblem {
	var out []configProblem
	for _, k := range configKeys {
		fl := flags.Lookup(k)
		var want, example, def string
		var ok func(string) bool
		switch {
		case k == "timeout":
			want, example, def = "want a positive duration such as 3s or 500ms (a number needs a unit)", "5s", "3s"
			ok = func(s string) bool { d, err := time.ParseDuration(s); return err == nil && d > 0 }
		case k == "output":
			want, example, def = "want text or json", "json", "text"
			ok = func(s string) bool { return s == "text" || s == "json" }
		case fl != nil && fl.Value.Type() == "int":
			want, example, def = "want a whole number, 0 or more", "0", "0"
			ok = func(s string) bool { n, err := strconv.Atoi(s); return err == nil && n >= 0 }
		case fl != nil && fl.Value.Type() == "bool":

			want, example, def = "want true or false", "true", "false"
			ok = func(s string) bool { _, err := strconv.ParseBool(s); return err == nil }
		default:
			continue
		}
		if fl != nil {
			def = fl.DefValue
		}
		raw := v.Get(k)
		if raw == nil {
			continue
		}
		s := fmt.Sprint(raw)
		if ok(s) {
			continue
		}
		what := k
		if k == "output" {
			what = "output format"
		}
		detail := fmt.Sprintf("invalid %s %q: %s", what, s, want)
		var err error
		env := "CHATQ_" + strings.ToUpper(strings.ReplaceAll(k, "-", "_"))
		switch {
		case fl != nil && fl.Changed:
			err = configErr(fmt.Sprintf("e.g. --%s %s", k, example), "--%s: %s", k, detail)
		case getenv(env) != "":
			err = configErr(fmt.Sprintf("e.g. %s=%s, or unset it", env, example), "%s: %s", env, detail)
		case file != "" && v.InConfig(k):
			err = configErr(fmt.Sprintf("e.g. %q in %s", k+": "+example, file), "config file %s: key %s: %s", file, k, detail)
		default:
			err = configErr("", "%s: %s", k, detail)
		}
		out = append(out, configProblem{key: k, raw: s, err: err})
		v.Set(k, def)
	}
	return out
}
