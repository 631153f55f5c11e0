package urlcheck

import (
	"errors"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for s, ok := range map[string]bool{
		"http://h:8761/eureka":        true,
		" https://u:p@h/eureka ":      true,
		"ftp://h/":                    false,
		"h:8761":                      false,
		"http:///eureka":              false,
		"http://h:8761/%zz":           false,
		"":                            false,
		"https://user:secret@[::1:80": false,
	} {
		u, err := Parse(s)
		if ok != (err == nil) {
			t.Errorf("Parse(%q) = %v, %v; want ok=%v", s, u, err, ok)
		}
		if err != nil && (!errors.Is(err, ErrNotHTTP) || strings.Contains(err.Error(), "secret")) {
			t.Errorf("Parse(%q): error %v should be ErrNotHTTP and hide the password", s, err)
		}
	}
}

func TestPublicAndRoot(t *testing.T) {
	if got := Public("https://ops:secret@reg1:8761/eureka"); got != "https://reg1:8761/eureka" {
		t.Errorf("Public = %q", got)
	}
	for base, want := range map[string]string{
		"http://h:8761/eureka":     "http://h:8761",
		"http://h:8761/eureka/v2/": "http://h:8761",
		"http://h:8761/eureka/v1":  "http://h:8761",
		"http://h:8761/":           "http://h:8761",
		"http://h:8761/registry":   "http://h:8761/registry",
	} {
		if got := Root(base); got != want {
			t.Errorf("Root(%q) = %q, want %q", base, got, want)
		}
	}
}

// TestPeerName: the spellings a client and a server may give one peer
// meet where only case or a trailing slash differ, never credentials in
// the name, and stay apart otherwise, so that a server in doubt
// replicates.
func TestPeerName(t *testing.T) {
	for _, c := range []struct {
		in, want string
	}{
		{"http://reg1.example.com:8761/eureka", "http://reg1.example.com:8761/eureka"},
		{"HTTP://Reg1.Example.COM:8761/eureka/", "http://reg1.example.com:8761/eureka"},
		{"https://agent:secret@reg1:8761/eureka", "https://reg1:8761/eureka"},
		{"http://reg1:8761/eureka?x=1#f", "http://reg1:8761/eureka"},
		{"http://reg1:8761", "http://reg1:8761"},
		{"http://[::1]:8761/eureka", "http://[::1]:8761/eureka"},
		{"http://reg1:8761/Eureka", "http://reg1:8761/Eureka"},         // paths are case-sensitive
		{"http://reg1:80/eureka", "http://reg1:80/eureka"},             // not equated with http://reg1/eureka
		{"http://10.0.0.1:8761/eureka", "http://10.0.0.1:8761/eureka"}, // not equated with its name
	} {
		u, err := Parse(c.in)
		if err != nil {
			t.Fatalf("Parse(%q): %v", c.in, err)
		}
		if got := PeerName(u); got != c.want {
			t.Errorf("PeerName(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
