package auth

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/crypto/bcrypt"

	"github.com/heureka-project/heureka"
)

// Role is what a user may do; see the package documentation.
type Role string

const (
	RoleAgent    Role = "agent"
	RoleOperator Role = "operator"
	RolePeer     Role = "peer"
	RoleReader   Role = "reader"
)

// Reads says who may read the registry.
type Reads string

const (
	ReadsOpen          Reads = "open"
	ReadsAuthenticated Reads = "authenticated"
)

// File is the credentials file as written.
type File struct {
	Reads Reads  `json:"reads"`
	Users []User `json:"users"`
}

// User is one entry of the credentials file.
type User struct {
	Name  string `json:"name"`
	Roles []Role `json:"roles"`
	// Apps and Instances scope an agent: regular expressions matched
	// against the whole application name and instance ID, ignoring case.
	Apps      []string `json:"apps,omitempty"`
	Instances []string `json:"instances,omitempty"`
	// Secrets are hashed: bcrypt or sha256:HEX.
	Secrets []string `json:"secrets,omitempty"`
	// Certificate lets a verified TLS client certificate whose subject
	// common name is Name authenticate as this user.
	Certificate bool `json:"certificate,omitempty"`
}

// Limits of the file, so that a mistake cannot make every check slow.
const (
	maxFileBytes   = 4 << 20
	maxUsers       = 10_000
	maxNameBytes   = 128
	maxPatterns    = 64
	maxSecrets     = 8
	maxBcryptCost  = 15
	sha256Prefix   = "sha256:"
	sha256HexBytes = 64
)

// Parse reads and checks a credentials file. Its errors name the user and
// field at fault and never quote a secret.
func Parse(data []byte) (*File, error) {
	if len(data) > maxFileBytes {
		return nil, fmt.Errorf("credentials file is %d bytes; the limit is %d", len(data), maxFileBytes)
	}
	if !utf8.Valid(data) {
		return nil, errors.New("credentials file is not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var f File
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("credentials file: %v", jsonError(err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("credentials file: more than one JSON value")
	}
	if err := f.Validate(); err != nil {
		return nil, err
	}
	return &f, nil
}

// jsonError drops the Go type names that encoding/json puts in its
// messages, which say nothing to whoever edits the file.
func jsonError(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("%s: wrong type (%s)", te.Field, te.Value)
	}
	return err.Error()
}

// Validate checks f, naming the first user and field at fault.
func (f *File) Validate() error {
	switch f.Reads {
	case ReadsOpen, ReadsAuthenticated:
	case "":
		return errors.New(`reads: missing; say "open" (anyone may read the registry) or "authenticated"`)
	default:
		return fmt.Errorf(`reads: %q is not "open" or "authenticated"`, f.Reads)
	}
	if len(f.Users) > maxUsers {
		return fmt.Errorf("users: %d entries; the limit is %d", len(f.Users), maxUsers)
	}
	names := make(map[string]bool, len(f.Users))
	tokens := map[[32]byte]string{}
	for i, u := range f.Users {
		if err := u.validate(); err != nil {
			if u.Name != "" && validName(u.Name) == nil {
				return fmt.Errorf("users[%d] (%s): %v", i, u.Name, err)
			}
			return fmt.Errorf("users[%d]: %v", i, err)
		}
		if names[u.Name] {
			return fmt.Errorf("users[%d]: the name %q is used twice", i, u.Name)
		}
		names[u.Name] = true
		for _, s := range u.Secrets {
			if h, ok := parseSHA256(s); ok {
				if other, dup := tokens[h]; dup {
					return fmt.Errorf("users[%d] (%s): the same token secret is given to %s; tokens must be unique", i, u.Name, other)
				}
				tokens[h] = u.Name
			}
		}
	}
	return nil
}

func (u *User) validate() error {
	if err := validName(u.Name); err != nil {
		return err
	}
	if len(u.Roles) == 0 {
		return errors.New(`roles: none; give one or more of "agent", "operator", "peer", "reader"`)
	}
	seen := map[Role]bool{}
	for _, r := range u.Roles {
		switch r {
		case RoleAgent, RoleOperator, RolePeer, RoleReader:
		default:
			return fmt.Errorf(`roles: %q is not one of "agent", "operator", "peer", "reader"`, r)
		}
		if seen[r] {
			return fmt.Errorf("roles: %q is listed twice", r)
		}
		seen[r] = true
	}
	if seen[RoleAgent] && len(u.Apps) == 0 {
		return errors.New(`apps: an agent needs the application-name patterns it may write to, e.g. ["HDFS-DATANODE\\..*"]`)
	}
	if !seen[RoleAgent] && (len(u.Apps) > 0 || len(u.Instances) > 0) {
		return errors.New("apps and instances scope the agent role only; this user is no agent")
	}
	for field, pats := range map[string][]string{"apps": u.Apps, "instances": u.Instances} {
		if len(pats) > maxPatterns {
			return fmt.Errorf("%s: %d patterns; the limit is %d", field, len(pats), maxPatterns)
		}
		for _, p := range pats {
			if _, err := heureka.CompilePattern(p); err != nil {
				return fmt.Errorf("%s: %v", field, err)
			}
		}
	}
	if len(u.Secrets) == 0 && !u.Certificate {
		return errors.New(`secrets: none, and no "certificate": true; give a hash from heureka auth hash or heureka auth token`)
	}
	if len(u.Secrets) > maxSecrets {
		return fmt.Errorf("secrets: %d; the limit is %d", len(u.Secrets), maxSecrets)
	}
	for i, s := range u.Secrets {
		if err := validSecret(s); err != nil {
			return fmt.Errorf("secrets[%d]: %v", i, err)
		}
	}
	return nil
}

// validName accepts printable names without ':' (the basic-auth separator)
// or spaces.
func validName(n string) error {
	switch {
	case n == "":
		return errors.New("name: empty")
	case len(n) > maxNameBytes:
		return fmt.Errorf("name: %d bytes; the limit is %d", len(n), maxNameBytes)
	case strings.ContainsRune(n, ':'):
		return fmt.Errorf("name: %q contains ':', which basic auth cannot carry in a user name", n)
	}
	for _, r := range n {
		if !unicode.IsPrint(r) || unicode.IsSpace(r) {
			return fmt.Errorf("name: %q contains a space or an unprintable character", n)
		}
	}
	return nil
}

// validSecret checks a hashed secret without ever quoting it: a plaintext
// password put here by mistake must not reach a log.
func validSecret(s string) error {
	if strings.HasPrefix(s, "$2") {
		cost, err := bcrypt.Cost([]byte(s))
		if err != nil {
			return errors.New("not a valid bcrypt hash")
		}
		if cost > maxBcryptCost {
			return fmt.Errorf("bcrypt cost %d; the limit is %d (each check would take seconds)", cost, maxBcryptCost)
		}
		return nil
	}
	if strings.HasPrefix(s, sha256Prefix) {
		if _, ok := parseSHA256(s); !ok {
			return fmt.Errorf("want sha256: and %d hex digits", sha256HexBytes)
		}
		return nil
	}
	return errors.New("neither a bcrypt hash ($2a$…, $2b$…, $2y$…) nor sha256:HEX; make one with heureka auth hash or heureka auth token (plaintext secrets are refused)")
}

func parseSHA256(s string) ([32]byte, bool) {
	var h [32]byte
	hx, ok := strings.CutPrefix(s, sha256Prefix)
	if !ok || len(hx) != sha256HexBytes {
		return h, false
	}
	if _, err := hex.Decode(h[:], []byte(hx)); err != nil {
		return h, false
	}
	return h, true
}

// HashToken returns the stored form of a high-entropy token.
func HashToken(token string) string {
	h := sha256.Sum256([]byte(token))
	return sha256Prefix + hex.EncodeToString(h[:])
}

// HashPassword returns the bcrypt form of a password (cost 0 means
// bcrypt's default, 10).
func HashPassword(password string, cost int) (string, error) {
	if cost == 0 {
		cost = bcrypt.DefaultCost
	}
	if cost < bcrypt.MinCost || cost > maxBcryptCost {
		return "", fmt.Errorf("bcrypt cost %d: want %d to %d", cost, bcrypt.MinCost, maxBcryptCost)
	}
	h, err := bcrypt.GenerateFromPassword([]byte(password), cost)
	if err != nil {
		return "", err
	}
	return string(h), nil
}

// NewToken returns a random token, "hk_" and 52 base32 characters (256
// random bits), fit for a bearer token or a basic-auth password.
func NewToken() string {
	return "hk_" + rand.Text() + rand.Text()
}
