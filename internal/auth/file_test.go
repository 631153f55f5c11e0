package auth

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

const (
	testBcrypt = "$2a$04$0Uy/9zB9vBhJ0Zrz6Yy0s.2Yk8v3yQJ4kzXkq7e2CwP3g1S3V5b9e" // shape only
	testSHA    = "sha256:2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881"
)

// validBcrypt is a real hash (of "x"), made once.
var validBcrypt = func() string {
	h, err := HashPassword("x", 4)
	if err != nil {
		panic(err)
	}
	return h
}()

func TestParse(t *testing.T) {
	user := func(fields string) string {
		return `{"reads":"open","users":[{` + fields + `}]}`
	}
	for _, c := range []struct {
		name, file string
		err        string // "" for a valid file
	}{
		{"minimal", user(`"name":"ops","roles":["operator"],"secrets":["` + testSHA + `"]`), ""},
		{"agent", user(`"name":"dn","roles":["agent"],"apps":["HDFS-DATANODE\\..*"],"instances":["prod-.*"],"secrets":["` + validBcrypt + `"]`), ""},
		{"certificate only", user(`"name":"peer-1","roles":["peer"],"certificate":true`), ""},
		{"no users", `{"reads":"authenticated","users":[]}`, ""},

		{"reads missing", `{"users":[]}`, `reads: missing`},
		{"reads wrong", `{"reads":"sometimes","users":[]}`, `"sometimes" is not`},
		{"unknown field", `{"reads":"open","users":[],"extra":1}`, `unknown field "extra"`},
		{"typo in a user", user(`"name":"ops","role":["operator"]`), `unknown field "role"`},
		{"wrong type", `{"reads":"open","users":{}}`, `users: wrong type`},
		{"two values", `{"reads":"open","users":[]} {}`, "more than one JSON value"},
		{"truncated", `{"reads":"open","users":[`, "unexpected EOF"},
		{"invalid UTF-8", "{\"reads\":\"open\xff\"}", "UTF-8"},
		{"no name", user(`"roles":["operator"],"secrets":["` + testSHA + `"]`), "users[0]: name: empty"},
		{"colon in name", user(`"name":"a:b","roles":["operator"],"secrets":["` + testSHA + `"]`), "contains ':'"},
		{"space in name", user(`"name":"a b","roles":["operator"],"secrets":["` + testSHA + `"]`), "space"},
		{"no roles", user(`"name":"ops","secrets":["` + testSHA + `"]`), "(ops): roles: none"},
		{"unknown role", user(`"name":"ops","roles":["admin"],"secrets":["` + testSHA + `"]`), `"admin" is not one of`},
		{"role twice", user(`"name":"ops","roles":["peer","peer"],"secrets":["` + testSHA + `"]`), "listed twice"},
		{"agent without apps", user(`"name":"dn","roles":["agent"],"secrets":["` + testSHA + `"]`), "an agent needs"},
		{"apps without agent", user(`"name":"ops","roles":["operator"],"apps":["X"],"secrets":["` + testSHA + `"]`), "agent role only"},
		{"bad pattern", user(`"name":"dn","roles":["agent"],"apps":["(("],"secrets":["` + testSHA + `"]`), `apps: pattern "(("`},
		{"empty pattern", user(`"name":"dn","roles":["agent"],"apps":[""],"secrets":["` + testSHA + `"]`), "empty pattern"},
		{"no secrets", user(`"name":"ops","roles":["operator"]`), "secrets: none"},
		{"plaintext secret", user(`"name":"ops","roles":["operator"],"secrets":["hunter2"]`), "plaintext secrets are refused"},
		{"bad bcrypt", user(`"name":"ops","roles":["operator"],"secrets":["$2a$10$short"]`), "not a valid bcrypt hash"},
		{"slow bcrypt", user(`"name":"ops","roles":["operator"],"secrets":["` + strings.Replace(testBcrypt, "$04$", "$31$", 1) + `"]`), "cost 31"},
		{"short sha256", user(`"name":"ops","roles":["operator"],"secrets":["sha256:abcd"]`), "64 hex digits"},
		{"duplicate user", `{"reads":"open","users":[{"name":"a","roles":["peer"],"certificate":true},{"name":"a","roles":["peer"],"certificate":true}]}`, "used twice"},
		{"shared token", `{"reads":"open","users":[{"name":"a","roles":["peer"],"secrets":["` + testSHA + `"]},{"name":"b","roles":["peer"],"secrets":["` + testSHA + `"]}]}`, "tokens must be unique"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, err := Parse([]byte(c.file))
			if c.err == "" {
				if err != nil {
					t.Fatalf("valid file refused: %v", err)
				}
				if _, err := compile(f); err != nil {
					t.Fatalf("compile: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Fatalf("got %v, want an error with %q", err, c.err)
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Errorf("the error quotes a secret: %v", err)
			}
		})
	}
}

// FuzzParse checks that no input makes the parser panic, that every file
// it accepts compiles, and that an accepted file means the same after it
// is written out and read again.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"reads":"open","users":[]}`,
		`{"reads":"authenticated","users":[{"name":"ops","roles":["operator"],"secrets":["` + testSHA + `"]}]}`,
		`{"reads":"open","users":[{"name":"dn","roles":["agent","reader"],"apps":["HDFS-DATANODE\\..*","(?i)x|y"],"instances":["a{1,3}"],"secrets":["` + validBcrypt + `"],"certificate":true}]}`,
		`{"reads":"open","users":[{"name":"p","roles":["peer"],"certificate":true}]}`,
		`{"reads":"open","users":[{"name":"\u00e9\u4e16","roles":["reader"],"secrets":["sha256:` + strings.Repeat("A", 64) + `"]}]}`,
		`{"reads":"open","users":[{"name":"x","roles":["agent"],"apps":["[[:alpha:]]+\\d*"],"secrets":["$2y$04$abcdefghijklmnopqrstuu5BJ6W8Ut1IcvL1j7lK8z2mS3/bX0hE."]}]}`,
		`{"reads":"open","users":null}`, `{"reads":"open","users":[null]}`, `{"reads":"open","users":[{"roles":null}]}`,
		`{"reads":1}`, `[]`, `null`, `{"reads":"open","users":[{"name":"a","roles":["peer"],"certificate":"yes"}]}`,
		`{"reads":"open","users":[{"name":"a","roles":["agent"],"apps":["` + strings.Repeat("(", 100) + `"]}]}`,
		`{"reads":"open","reads":"authenticated","users":[]}`,
		"\xef\xbb\xbf{\"reads\":\"open\",\"users\":[]}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Parse(data)
		if err != nil {
			return
		}
		if _, err := compile(file); err != nil {
			t.Fatalf("accepted file does not compile: %v\n%q", err, data)
		}
		out, err := json.Marshal(file)
		if err != nil {
			t.Fatal(err)
		}
		again, err := Parse(out)
		if err != nil {
			t.Fatalf("own output refused: %v\n%s", err, out)
		}
		if !reflect.DeepEqual(normalise(file), normalise(again)) {
			t.Fatalf("round trip changed the file:\n%+v\n%+v", file, again)
		}
	})
}

// normalise treats nil and empty slices alike, as JSON's omitempty does.
func normalise(f *File) *File {
	c := *f
	c.Users = nil
	for _, u := range f.Users {
		for _, s := range []*[]string{&u.Apps, &u.Instances, &u.Secrets} {
			if len(*s) == 0 {
				*s = nil
			}
		}
		c.Users = append(c.Users, u)
	}
	return &c
}
