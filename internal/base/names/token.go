package names

// IsToken reports whether s is a well-formed idempotency token: 16 to 64
// characters of A-Z a-z 0-9 _ -. It is a loop rather than a regexp because
// the three packages that take tokens each compiled `^[A-Za-z0-9_-]{16,64}$`
// at start-up, about 700 allocations apiece (the bounded repeat compiles to
// 64 copies), which every run of the binary paid whatever its command.
func IsToken(s string) bool {
	if len(s) < 16 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}
