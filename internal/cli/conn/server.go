package conn

import (
	"fmt"
	"strings"
)

// InfoFields reads the "field:value" lines of an INFO reply.
func InfoFields(info string) map[string]string {
	f := map[string]string{}
	for _, line := range strings.Split(info, "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok {
			f[k] = v
		}
	}
	return f
}

// ServerIdentity is the server's name and version as its INFO fields give
// them: on Valkey ("valkey", valkey_version), whose redis_version stays at
// 7.2.4 for the clients that compare it; on Redis ("redis", redis_version);
// ("", "") when INFO has no server section (the embedded server).
func ServerIdentity(f map[string]string) (name, version string) {
	if f["server_name"] == "valkey" && f["valkey_version"] != "" {
		return "valkey", f["valkey_version"]
	}
	if v := f["redis_version"]; v != "" {
		return "redis", v
	}
	return "", ""
}

// HelloFields flattens HELLO's reply (a map in RESP3, a flat array in
// RESP2) to its string fields.
func HelloFields(reply any) map[string]string {
	out := map[string]string{}
	switch r := reply.(type) {
	case map[any]any:
		for k, v := range r {
			out[fmt.Sprint(k)] = fmt.Sprint(v)
		}
	case []any:
		for i := 0; i+1 < len(r); i += 2 {
			out[fmt.Sprint(r[i])] = fmt.Sprint(r[i+1])
		}
	}
	return out
}
