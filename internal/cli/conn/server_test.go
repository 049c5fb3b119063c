package conn

import "testing"

// INFO server lines as each server prints them (measured).
func TestServerIdentity(t *testing.T) {
	for _, tc := range []struct{ info, name, version string }{
		{"# Server\r\nredis_version:6.2.16\r\nredis_mode:standalone\r\n", "redis", "6.2.16"},
		{"# Server\r\nredis_version:255.255.255\r\n", "redis", "255.255.255"},
		{"# Server\r\nredis_version:7.2.4\r\nserver_name:valkey\r\nvalkey_version:7.2.7\r\n", "valkey", "7.2.7"},
		{"# Server\r\nredis_version:7.2.4\r\nserver_name:valkey\r\nvalkey_version:8.0.1\r\n", "valkey", "8.0.1"},
		{"# Clients\r\nconnected_clients:1\r\n", "", ""}, // the embedded server
	} {
		name, version := ServerIdentity(InfoFields(tc.info))
		if name != tc.name || version != tc.version {
			t.Errorf("%q: %s %s, want %s %s", tc.info, name, version, tc.name, tc.version)
		}
	}
}
