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

	v *viper.Viper
}

const DefaultURL = "redis://127.0.0.1:6379/0"

// configKeys are the keys a config file may hold; each but password is also a
// global flag and a CHATQ_<KEY> variable.
var configKeys = []string{"url", "cluster", "prefix", "password", "output", "exit-status", "timeout", "verbose"}

// LoadConfig reads the configuration from the parsed global flags, the
// environment and the config file. It does no network I/O.
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
			return nil, WithHint(UsageErrorf("config file %s: %v", path, pe.Err),
				"create it, or drop --config (CHATQ_CONFIG) to use the default")
		default:
			return nil, UsageErrorf("config file %s: %v", path, err)
		}
	}
	if path != "" {
		var unknown []string
		for _, k := range v.AllKeys() {
			if v.InConfig(k) && !contains(configKeys, k) {
				unknown = append(unknown, k)
			}
		}
		if len(unknown) > 0 {
			sort.Strings(unknown)
			return nil, WithHint(UsageErrorf("config file %s: unknown key %s", path, strings.Join(unknown, ", ")),
				"known keys: "+strings.Join(configKeys, ", "))
		}
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
		v:          v,
	}
	if c.URL == "" {
		c.URL = DefaultURL
	}
	switch c.Output {
	case "text", "json":
	default:
		return nil, UsageErrorf("invalid output format %q: want text or json", c.Output)
	}
	// cast's duration parser accepts bare numbers as nanoseconds; parse
	// ourselves so "--timeout 5" is rejected rather than meaning 5ns.
	ts := v.GetString("timeout")
	d, err := time.ParseDuration(ts)
	if err != nil || d <= 0 {
		return nil, UsageErrorf("invalid timeout %q: want a positive duration such as 3s or 500ms", ts)
	}
	c.Timeout = d
	return c, nil
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
	out := make([]ConfigEntry, 0, len(configKeys))
	for _, k := range configKeys {
		out = append(out, ConfigEntry{Key: k, Value: values[k], Source: c.source(k, flags, getenv)})
	}
	return out
}

type ConfigEntry struct {
	Key    string `json:"key"`
	Value  string `json:"value"`
	Source string `json:"source"`
}
