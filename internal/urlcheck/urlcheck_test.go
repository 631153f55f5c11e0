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
