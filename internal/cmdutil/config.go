package cmdutil

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"github.com/spf13/viper"
)

// Config is chatq's effective configuration: flag > CHATQ_* env > config
// file > default.
type Config struct {
	URL        string
	Cluster    bool
	Prefix     string
	Password   string // from CHATQ_PASSWORD, REDISCLI_AUTH or the config file; never printed
	Output     string // "text" or "json"
	ExitStatus bool
	Timeout    time.Duration
	Verbose    bool
	File       string // the config file read, "" when none
	// Err is the configuration's first problem (a file that cannot be
	// read, an unknown key, a value that does not parse), nil when none.
	// The other fields then hold defaults in place of what was wrong.
	Err error

	problems []configProblem
	v        *viper.Viper
}

const DefaultURL = "redis://127.0.0.1:6379/0"

// configKeys are the keys a config file may hold; each but password is also a
// global flag and a CHATQ_<KEY> variable.
var configKeys = []string{"url", "cluster", "prefix", "password", "output", "exit-status", "timeout", "verbose"}

// LoadConfig reads the configuration from the parsed global flags, the
// environment and the config file. It does no network I/O. On a bad file or
// value it returns the error (a ConfigError) and also a configuration built
// from what was usable, for the commands that work without a server.
func LoadConfig(flags *pflag.FlagSet, getenv func(string) string) (*Config, error) {
	v := viper.New()
	v.SetEnvPrefix("CHATQ")
	v.SetEnvKeyReplacer(strings.NewReplacer("-", "_"))
	v.AutomaticEnv()
	if err := v.BindEnv("password", "CHATQ_PASSWORD", "REDISCLI_AUTH"); err != nil {
		return nil, err
	}
	for _, k := range configKeys {
		if fl := flags.Lookup(k); fl != nil {
			if err := v.BindPFlag(k, fl); err != nil {
				return nil, err
			}
		}
	}

	path, explicit := configPath(flags, getenv)
	// A bad file or value does not stop here: the configuration is built
	// from what is usable, so that version, config and completion still
	// work, and the first problem is returned with it.
	var problem error
	if path != "" {
		v.SetConfigFile(path)
		switch strings.TrimPrefix(filepath.Ext(path), ".") {
		case "json", "toml", "yaml", "yml":
		default:
			v.SetConfigType("yaml")
		}
		err := v.ReadInConfig()
		var pe *fs.PathError
		switch {
		case err == nil:
		case errors.As(err, &pe) && errors.Is(err, fs.ErrNotExist) && !explicit:
			path = ""
		case errors.As(err, &pe):
			problem = configErr("create it, or drop --config (CHATQ_CONFIG) to use the default", "config file %s: %v", path, pe.Err)
			path = ""
		default:
			problem = configErr("fix the file, or point --config (CHATQ_CONFIG) at another", "config file %s: %v", path, err)
			path = ""
		}
	}
	var problems []configProblem
	if path != "" {
		var unknown []string
		for _, k := range v.AllKeys() {
			if v.InConfig(k) && !contains(configKeys, k) {
				unknown = append(unknown, k)
			}
		}
		if len(unknown) > 0 {
			sort.Strings(unknown)
			err := configErr("known keys: "+strings.Join(configKeys, ", "), "config file %s: unknown key %s", path, strings.Join(unknown, ", "))
			for _, k := range unknown {
				problems = append(problems, configProblem{key: k, raw: fmt.Sprint(v.Get(k)), err: err})
			}
		}
	}
	problems = append(problems, checkValues(v, flags, getenv, path)...)
	if problem == nil && len(problems) > 0 {
		problem = problems[0].err
	}

	c := &Config{
		URL:        v.GetString("url"),
		Cluster:    v.GetBool("cluster"),
		Prefix:     v.GetString("prefix"),
		Password:   v.GetString("password"),
		Output:     v.GetString("output"),
		ExitStatus: v.GetBool("exit-status"),
		Verbose:    v.GetBool("verbose"),
		File:       path,
		Err:        problem,
		problems:   problems,
		v:          v,
	}
	if c.URL == "" {
		c.URL = DefaultURL
	}
	// checkValues made sure it parses.
	c.Timeout, _ = time.ParseDuration(v.GetString("timeout"))
	return c, problem
}

// configPath returns the config file to read and whether it was named
// explicitly (--config or CHATQ_CONFIG), in which case it must exist.
func configPath(flags *pflag.FlagSet, getenv func(string) string) (string, bool) {
	if fl := flags.Lookup("config"); fl != nil && fl.Changed {
		return fl.Value.String(), true
	}
	if p := getenv("CHATQ_CONFIG"); p != "" {
		return p, true
	}
	dir := getenv("XDG_CONFIG_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", false
		}
		dir = filepath.Join(home, ".config")
	}
	return filepath.Join(dir, "chatq", "config.yaml"), false
}

// source says where the value of key came from.
func (c *Config) source(key string, flags *pflag.FlagSet, getenv func(string) string) string {
	if fl := flags.Lookup(key); fl != nil && fl.Changed {
		return "flag"
	}
	env := "CHATQ_" + strings.ToUpper(strings.ReplaceAll(key, "-", "_"))
	if getenv(env) != "" {
		return "env " + env
	}
	if key == "password" && getenv("REDISCLI_AUTH") != "" {
		return "env REDISCLI_AUTH"
	}
	if c.v.InConfig(key) {
		return "config " + c.File
	}
	return "default"
}

// RedactedURL is the URL with any password replaced, safe to print.
func (c *Config) RedactedURL() string { return redactURL(c.URL) }

func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// describe lists the effective settings and their sources for `chatq config`.
func (c *Config) Describe(flags *pflag.FlagSet, getenv func(string) string) []ConfigEntry {
	pw := ""
	if c.Password != "" {
		pw = "(set, hidden)"
	}
	values := map[string]string{
		"url": c.RedactedURL(), "cluster": fmt.Sprint(c.Cluster), "prefix": c.Prefix,
		"password": pw, "output": c.Output, "exit-status": fmt.Sprint(c.ExitStatus),
		"timeout": c.Timeout.String(), "verbose": fmt.Sprint(c.Verbose),
	}
	broken := map[string]configProblem{}
	for _, p := range c.problems {
		broken[p.key] = p
	}
	out := make([]ConfigEntry, 0, len(configKeys))
	for _, k := range configKeys {
		e := ConfigEntry{Key: k, Value: values[k], Source: c.source(k, flags, getenv)}
		if p, ok := broken[k]; ok && k != "password" {
			e.Value, e.Error = p.raw, p.err.Error()
		}
		out = append(out, e)
	}
	for _, p := range c.problems { // unknown keys in the file
		if !contains(configKeys, p.key) {
			// Not shown: a misspelt "pasword" would print a secret.
			out = append(out, ConfigEntry{Key: p.key, Value: "(not shown)", Source: "config " + c.v.ConfigFileUsed(), Error: p.err.Error()})
		}
	}
	return out
}

// ConfigEntry is one line of `chatq config`. Error says why the value
// given is not used (the default is, meanwhile).
type ConfigEntry struct {
	Key    string `json:"key"`
	Value  string `json:"value"`
	Source string `json:"source"`
	Error  string `json:"error,omitempty"`
}
