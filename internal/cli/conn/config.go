package conn

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/spf13/pflag"
	"github.com/spf13/viper"
)

// Config is chatq's effective configuration: flag > CHATQ_* env > config
// file > default.
type Config struct {
	URL        string
	Cluster    bool
	Prefix     string
	Password   string // from CHATQ_PASSWORD, REDISCLI_AUTH or the config file (or --askpass, once asked); never printed
	Output     string // "text" or "json"
	ExitStatus bool
	Timeout    time.Duration
	Verbose    bool
	File       string // the config file read, "" when none
	// Err is the configuration's first problem (a file that cannot be
	// read, an unknown key, a value that does not parse), nil when none.
	// The other fields then hold defaults in place of what was wrong.
	Err error

	// Production connections: TLS like redis-cli, Sentinel, credentials
	// given apart from the URL.
	TLS              bool   // TLS even with a redis:// URL
	CACert           string // PEM file of the CAs that may sign the server's certificate
	Cert, Key        string // client certificate and key (mutual TLS)
	Insecure         bool   // skip certificate verification
	SNI              string // server name sent and verified
	SentinelMaster   string // with it, --url names Sentinels and this is the master's name
	SentinelUser     string // Sentinel's own user, when it differs from the master's
	SentinelPassword string // Sentinel's own password (env or config file only); never printed
	User             string // overrides the URL's user
	DB               int    // overrides the URL's database when DBSet
	DBSet            bool
	AskPass          bool // read the password from the terminal, without echo

	// Warnings are what every command says on stderr about the
	// configuration, and `chatq config` shows (a password in a file other
	// users can read).
	Warnings []ConfigWarning

	askedPassword bool // Password came from --askpass
	problems      []configProblem
	v             *viper.Viper
}

const DefaultURL = "redis://127.0.0.1:6379/0"

// configKeys are the keys a config file may hold; each but the passwords is
// also a global flag, and each is a CHATQ_<KEY> variable.
var configKeys = []string{
	"url", "cluster", "prefix", "user", "password", "db", "askpass",
	"tls", "cacert", "cert", "key", "insecure", "sni",
	"sentinel-master", "sentinel-user", "sentinel-password",
	"output", "exit-status", "timeout", "verbose",
}

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
			hint := "known keys: " + strings.Join(configKeys, ", ")
			if near := nearest(unknown[0], configKeys); near != "" {
				hint = fmt.Sprintf("did you mean %s? (%s)", near, hint)
			}
			err := configErr(hint, "config file %s: unknown key %s", path, strings.Join(unknown, ", "))
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
		URL:              v.GetString("url"),
		Cluster:          v.GetBool("cluster"),
		Prefix:           v.GetString("prefix"),
		Password:         v.GetString("password"),
		Output:           v.GetString("output"),
		ExitStatus:       v.GetBool("exit-status"),
		Verbose:          v.GetBool("verbose"),
		File:             path,
		TLS:              v.GetBool("tls"),
		CACert:           v.GetString("cacert"),
		Cert:             v.GetString("cert"),
		Key:              v.GetString("key"),
		Insecure:         v.GetBool("insecure"),
		SNI:              v.GetString("sni"),
		SentinelMaster:   v.GetString("sentinel-master"),
		SentinelUser:     v.GetString("sentinel-user"),
		SentinelPassword: v.GetString("sentinel-password"),
		User:             v.GetString("user"),
		AskPass:          v.GetBool("askpass"),
		Err:              problem,
		problems:         problems,
		v:                v,
	}
	if c.URL == "" {
		c.URL = DefaultURL
	}
	if path != "" {
		c.Warnings = append(c.Warnings, exposedPasswords(path, v)...)
	}
	// checkValues made sure it parses.
	c.Timeout, _ = time.ParseDuration(v.GetString("timeout"))
	if c.source("db", flags, getenv) != "default" {
		ds := v.GetString("db")
		n, err := strconv.Atoi(ds)
		if err != nil || n < 0 {
			return nil, usageErrorf("invalid --db %q: want a database number, 0 or more", ds)
		}
		c.DB, c.DBSet = n, true
	}
	if err := c.validateConnection(); err != nil {
		return nil, err
	}
	if i := strings.IndexFunc(c.Prefix, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }); i >= 0 {
		// Keys with spaces or control characters are a typo, or a shell
		// quoting slip, that no redis-cli user can type back.
		return nil, withHint(usageErrorf("invalid --prefix %q: no whitespace or control characters", c.Prefix),
			"use letters, digits and separators such as ':' or '-', e.g. --prefix app:")
	}
	if strings.ContainsAny(c.Prefix, "{}") {
		// A brace in the prefix would become the hash tag of every key,
		// putting a queue's or a list's keys in different cluster slots
		// (or all of chatq's in one).
		return nil, withHint(usageErrorf("invalid --prefix %q: no '{' or '}' (they would change the keys' hash tags)", c.Prefix),
			"use letters, digits and separators such as ':' or '-', e.g. --prefix app:")
	}
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

// source says where the value of key came from: "flag", "env NAME",
// "config FILE" or "default".
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

// passwordSources lists, winner first, every place a password for the data
// server is given: --askpass, the URL, CHATQ_PASSWORD, REDISCLI_AUTH, the
// config file. The URL and --askpass are given for this server, so they win
// over the environment and the file, which apply to every server.
func (c *Config) passwordSources(getenv func(string) string) []string {
	var out []string
	if c.AskPass {
		out = append(out, "--askpass")
	}
	if _, pw, ok := urlCredentials(c.URL); ok && pw != "" {
		out = append(out, "url")
	}
	if getenv("CHATQ_PASSWORD") != "" {
		out = append(out, "env CHATQ_PASSWORD")
	}
	if getenv("REDISCLI_AUTH") != "" {
		out = append(out, "env REDISCLI_AUTH")
	}
	if c.v != nil && c.v.InConfig("password") {
		out = append(out, "config "+c.File)
	}
	return out
}

// PasswordSource says where the password used comes from and which other
// sources it overrides, or "none".
func (c *Config) PasswordSource(getenv func(string) string) string {
	srcs := c.passwordSources(getenv)
	switch len(srcs) {
	case 0:
		return "none"
	case 1:
		return srcs[0]
	}
	return srcs[0] + " (overrides " + strings.Join(srcs[1:], ", ") + ")"
}

// validateConnection checks the connection settings against each other,
// with no I/O.
func (c *Config) validateConnection() error {
	tlsURL := strings.HasPrefix(strings.ToLower(c.URL), "rediss://")
	if !c.TLS && !tlsURL {
		for _, s := range []struct{ name, val string }{
			{"--cacert", c.CACert}, {"--cert", c.Cert}, {"--key", c.Key}, {"--sni", c.SNI},
		} {
			if s.val != "" {
				return withHint(usageErrorf("%s needs TLS", s.name), "add --tls (CHATQ_TLS=true) or use a rediss:// URL")
			}
		}
		if c.Insecure {
			return withHint(usageErrorf("--insecure needs TLS"), "add --tls (CHATQ_TLS=true) or use a rediss:// URL")
		}
	}
	if (c.Cert == "") != (c.Key == "") {
		return withHint(usageErrorf("--cert and --key go together"), "give the client certificate with --cert FILE and its private key with --key FILE")
	}
	if c.Cluster && c.SentinelMaster != "" {
		return withHint(usageErrorf("--cluster and --sentinel-master exclude each other"),
			"a Redis Cluster needs no Sentinel: give --cluster for a cluster, --sentinel-master NAME for a master behind Sentinel")
	}
	if strings.HasPrefix(strings.ToLower(c.URL), "unix://") && (c.TLS || c.Cluster || c.SentinelMaster != "") {
		return withHint(usageErrorf("a unix:// URL takes no --tls, --cluster or --sentinel-master"), "use redis:// or rediss://host:port for those")
	}
	return nil
}

// RedactedURL is the URL with any password replaced, safe to print.
func (c *Config) RedactedURL() string { return redactURL(c.URL) }

func redactURL(raw string) string {
	u, err := url.Parse(normalizeURL(raw))
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}

// nearest returns the name in names closest to s when s is a likely
// misspelling of it (at most two edits away, or its first three letters or
// more), else "".
func nearest(s string, names []string) string {
	s = strings.ToLower(s)
	best, bestD := "", 3
	for _, n := range names {
		d := editDistance(s, n)
		if len(s) >= 3 && strings.HasPrefix(n, s) {
			d = min(d, 2)
		}
		if d < bestD {
			best, bestD = n, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Describe lists the effective settings and their sources for `chatq
// config`. Passwords show only whether one is set; the password's source
// names every place one is given, the winner first.
func (c *Config) Describe(flags *pflag.FlagSet, getenv func(string) string) []ConfigEntry {
	hidden := func(set bool) string {
		if set {
			return "(set, hidden)"
		}
		return ""
	}
	_, urlPass, _ := urlCredentials(c.URL)
	pw := hidden(c.Password != "" || urlPass != "")
	if c.AskPass {
		pw = "(asked on the terminal)"
	}
	db := ""
	if c.DBSet {
		db = strconv.Itoa(c.DB)
	}
	values := map[string]string{
		"url": c.RedactedURL(), "cluster": fmt.Sprint(c.Cluster), "prefix": c.Prefix,
		"user": c.User, "password": pw, "db": db, "askpass": fmt.Sprint(c.AskPass),
		"tls": fmt.Sprint(c.TLS), "cacert": c.CACert, "cert": c.Cert, "key": c.Key,
		"insecure": fmt.Sprint(c.Insecure), "sni": c.SNI,
		"sentinel-master": c.SentinelMaster, "sentinel-user": c.SentinelUser,
		"sentinel-password": hidden(c.SentinelPassword != ""),
		"output":            c.Output, "exit-status": fmt.Sprint(c.ExitStatus),
		"timeout": c.Timeout.String(), "verbose": fmt.Sprint(c.Verbose),
	}
	broken := map[string]configProblem{}
	for _, p := range c.problems {
		broken[p.key] = p
	}
	out := make([]ConfigEntry, 0, len(configKeys))
	for _, k := range configKeys {
		src := c.source(k, flags, getenv)
		switch {
		case k == "password":
			src = c.PasswordSource(getenv)
		case k == "user" && c.User == "":
			if u, _, _ := urlCredentials(c.URL); u != "" {
				values[k], src = u, "url"
			} else {
				values[k] = "default" // the server's user when none is named
			}
		}
		e := ConfigEntry{Key: k, Value: values[k], Source: src}
		if p, ok := broken[k]; ok && k != "password" {
			e.Value, e.Error = p.raw, p.err.Error()
		}
		for _, w := range c.Warnings {
			if contains(w.Keys, k) {
				e.Warning = w.Message
			}
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

// ConfigWarning is something wrong with the configuration that does not
// stop chatq: Keys name the settings it is about.
type ConfigWarning struct {
	Keys    []string
	Message string
}

// exposedPasswords warns, as libpq does for a .pgpass, when the config file
// holds a password (the password or sentinel-password key, or a password in
// its url) and its mode gives its group or other users any access: the
// warning names the file and the fix. Only a file whose mode is loose is
// read a second time (for its own url, which a flag or variable may
// override). Windows file modes say nothing about other users.
func exposedPasswords(path string, v *viper.Viper) []ConfigWarning {
	if runtime.GOOS == "windows" {
		return nil
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm()&0o077 == 0 {
		return nil
	}
	var keys []string
	for _, k := range []string{"password", "sentinel-password"} {
		if v.InConfig(k) && v.GetString(k) != "" {
			keys = append(keys, k)
		}
	}
	if v.InConfig("url") {
		file := viper.New()
		file.SetConfigFile(path)
		if t := strings.TrimPrefix(filepath.Ext(path), "."); t != "json" && t != "toml" && t != "yaml" && t != "yml" {
			file.SetConfigType("yaml")
		}
		if file.ReadInConfig() == nil {
			if _, pw, ok := urlCredentials(file.GetString("url")); ok && pw != "" {
				keys = append(keys, "url")
			}
		}
	}
	if len(keys) == 0 {
		return nil
	}
	return []ConfigWarning{{Keys: keys, Message: fmt.Sprintf(
		"config file %s holds a password (%s) and other users can read it (mode %04o): run chmod 600 %s",
		path, strings.Join(keys, ", "), fi.Mode().Perm(), path)}}
}

// ConfigEntry is one line of `chatq config`. Error says why the value
// given is not used (the default is, meanwhile).
type ConfigEntry struct {
	Key    string `json:"key"`
	Value  string `json:"value"`
	Source string `json:"source"`
	Error  string `json:"error,omitempty"`
	// Warning is about where the value is kept: a password in a config
	// file other users can read.
	Warning string `json:"warning,omitempty"`
}

// Namespace is the RSMQ namespace of the queue commands and chatq top:
// flag (their --namespace), else CHATQ_NAMESPACE, else RSMQ's default.
func Namespace(flag string, getenv func(string) string) (string, error) {
	ns := flag
	if ns == "" {
		ns = getenv("CHATQ_NAMESPACE")
	}
	if ns == "" {
		ns = "rsmq"
	}
	if strings.ContainsAny(ns, "{} \t\r\n") {
		return "", usageErrorf("invalid --namespace %q: no whitespace, '{' or '}'", ns)
	}
	return ns, nil
}
