package auth

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/heureka-project/heureka"
	"github.com/heureka-project/heureka/internal/tick"
)

// Store holds the credentials loaded from one file and answers who a
// request comes from and what it may do. Build it with NewStore, then Load.
type Store struct {
	path string
	log  *slog.Logger
	cur  atomic.Pointer[table]

	mu   sync.Mutex  // serialises Load
	seen os.FileInfo // the file as last read, loaded or refused

	// slow bounds the bcrypt checks running at once: a flood of wrong
	// passwords then costs this many CPUs at most.
	slow chan struct{}
	// compare is bcrypt.CompareHashAndPassword; tests count its calls
	// (export_test.go).
	compare func(hash, password []byte) error
}

// table is one loaded credentials file; it is never modified after it is
// swapped in, except for its memory of verified passwords.
type table struct {
	reads  Reads
	users  map[string]*user
	tokens map[[32]byte]*user
	certs  map[string]*user

	key  [32]byte // HMAC key for memo; random per load
	mu   sync.Mutex
	memo map[[32]byte]*user // verified basic credentials
}

type user struct {
	bcrypts [][]byte
	tokens  [][32]byte
	// as is the user's Principal for each way of authenticating.
	basic, bearer, cert *Principal
}

// memoLimit bounds the memory of verified passwords; past it the memory
// starts again, which costs one bcrypt per client.
const memoLimit = 4096

// Limits on what is presented, checked before any work.
const (
	maxUserBytes   = maxNameBytes
	maxSecretBytes = 1024
)

// NewStore returns a Store for the credentials file at path. It reads
// nothing: call Load. logger may be nil.
func NewStore(path string, logger *slog.Logger) *Store {
	if logger == nil {
		logger = slog.Default()
	}
	return &Store{
		path:    path,
		log:     logger.With("subsystem", "auth"),
		slow:    make(chan struct{}, max(1, runtime.GOMAXPROCS(0)/2)),
		compare: bcrypt.CompareHashAndPassword,
	}
}

// Path is the credentials file's path.
func (s *Store) Path() string { return s.path }

// Load reads the credentials file and swaps it in. When the file cannot be
// read, parsed or validated, the credentials already loaded stay in force
// and the error says why; before the first successful Load every request
// is refused.
func (s *Store) Load() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, err := os.Open(s.path)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	s.seen = fi // a refused file is not retried until it changes
	data, err := io.ReadAll(io.LimitReader(f, maxFileBytes+1))
	if err != nil {
		return fmt.Errorf("read %s: %w", s.path, err)
	}
	parsed, err := Parse(data)
	if err != nil {
		return fmt.Errorf("%s: %w", s.path, err)
	}
	t, err := compile(parsed)
	if err != nil {
		return fmt.Errorf("%s: %w", s.path, err)
	}
	s.cur.Store(t)
	s.log.Info("credentials loaded", "path", s.path, "users", len(t.users), "reads", string(t.reads))
	return nil
}

// Watch loads the file again whenever its size, modification time or
// identity (a new file renamed over it) changes, checking every interval,
// until ctx is done. A refused file is logged and the old credentials stay.
// It returns nil.
func (s *Store) Watch(ctx context.Context, interval time.Duration) error {
	statFailed := false
	tick.Every(ctx, interval, nil, func() {
		fi, err := os.Stat(s.path)
		if err != nil {
			if !statFailed {
				s.log.Error("credentials file unreadable; keeping the credentials loaded", "path", s.path, "err", err)
			}
			statFailed = true
			return
		}
		statFailed = false
		s.mu.Lock()
		changed := s.seen == nil || !os.SameFile(s.seen, fi) || !s.seen.ModTime().Equal(fi.ModTime()) || s.seen.Size() != fi.Size()
		s.mu.Unlock()
		if changed {
			if err := s.Load(); err != nil {
				s.log.Error("credentials file refused; keeping the credentials loaded", "err", err)
			}
		}
	})
	return nil
}

// Loaded reports whether credentials are in force.
func (s *Store) Loaded() bool { return s.cur.Load() != nil }

// compile builds the lookup table of a validated file.
func compile(f *File) (*table, error) {
	t := &table{
		reads:  f.Reads,
		users:  make(map[string]*user, len(f.Users)),
		tokens: map[[32]byte]*user{},
		certs:  map[string]*user{},
		memo:   map[[32]byte]*user{},
	}
	if _, err := rand.Read(t.key[:]); err != nil {
		return nil, err
	}
	for _, fu := range f.Users {
		base := Principal{Name: fu.Name, roles: fu.Roles, appSrc: fu.Apps}
		for _, p := range fu.Apps {
			re, err := heureka.CompilePattern(p)
			if err != nil {
				return nil, err
			}
			base.apps = append(base.apps, re)
		}
		for _, p := range fu.Instances {
			re, err := heureka.CompilePattern(p)
			if err != nil {
				return nil, err
			}
			base.instances = append(base.instances, re)
		}
		u := &user{}
		for _, m := range []struct {
			dst    **Principal
			method string
		}{{&u.basic, "basic"}, {&u.bearer, "bearer"}, {&u.cert, "certificate"}} {
			p := base
			p.Method = m.method
			*m.dst = &p
		}
		for _, sec := range fu.Secrets {
			if h, ok := parseSHA256(sec); ok {
				u.tokens = append(u.tokens, h)
				t.tokens[h] = u
			} else {
				u.bcrypts = append(u.bcrypts, []byte(sec))
			}
		}
		t.users[fu.Name] = u
		if fu.Certificate {
			t.certs[fu.Name] = u
		}
	}
	return t, nil
}

// Authenticate returns who r comes from: the user of its Authorization
// header (Basic or Bearer), else of its verified TLS client certificate,
// else nil for an anonymous request. Credentials that are presented and
// wrong are an *Error of kind Unauthenticated, never anonymous.
func (s *Store) Authenticate(r *http.Request) (*Principal, error) {
	t := s.cur.Load()
	if t == nil {
		return nil, unauthenticated("no credentials are loaded on this server")
	}
	hs := r.Header.Values("Authorization")
	switch len(hs) {
	case 0:
		if r.TLS != nil && len(r.TLS.VerifiedChains) > 0 && len(r.TLS.VerifiedChains[0]) > 0 {
			if u := t.certs[r.TLS.VerifiedChains[0][0].Subject.CommonName]; u != nil {
				return u.cert, nil
			}
		}
		return nil, nil
	case 1:
	default:
		return nil, unauthenticated("%d Authorization headers; send one", len(hs))
	}
	scheme, rest, _ := strings.Cut(strings.TrimSpace(hs[0]), " ")
	rest = strings.TrimSpace(rest)
	switch strings.ToLower(scheme) {
	case "basic":
		return s.basic(t, rest)
	case "bearer":
		return bearer(t, rest)
	}
	if len(scheme) > 32 {
		scheme = scheme[:32] + "…"
	}
	return nil, unauthenticated("Authorization scheme %q is not supported: use Basic (user:password) or Bearer (a token)", scheme)
}

func (s *Store) basic(t *table, cred string) (*Principal, error) {
	raw, err := base64.StdEncoding.DecodeString(cred)
	if err != nil || len(raw) > maxUserBytes+1+maxSecretBytes {
		return nil, unauthenticated("malformed basic credentials: want base64 of user:password, at most %d bytes", maxUserBytes+1+maxSecretBytes)
	}
	name, pass, ok := strings.Cut(string(raw), ":")
	switch {
	case !ok:
		return nil, unauthenticated("malformed basic credentials: no ':' between user and password")
	case name == "":
		return nil, unauthenticated("basic credentials without a user name")
	case len(name) > maxUserBytes || validName(name) != nil:
		return nil, unauthenticated("basic credentials with an invalid user name")
	}
	refused := unauthenticated("user %q is unknown or its password is wrong", name)
	u := t.users[name]
	if u == nil || pass == "" || len(pass) > maxSecretBytes {
		return nil, refused
	}
	key := t.memoKey(name, pass)
	t.mu.Lock()
	known := t.memo[key] == u
	t.mu.Unlock()
	if known {
		return u.basic, nil
	}
	if !s.verify(u, pass) {
		return nil, refused
	}
	t.mu.Lock()
	if len(t.memo) >= memoLimit {
		clear(t.memo)
	}
	t.memo[key] = u
	t.mu.Unlock()
	return u.basic, nil
}

// verify checks pass against u's secrets: tokens first (cheap), then
// bcrypt, at most len(s.slow) at a time.
func (s *Store) verify(u *user, pass string) bool {
	h := sha256.Sum256([]byte(pass))
	for _, tok := range u.tokens {
		if subtle.ConstantTimeCompare(h[:], tok[:]) == 1 {
			return true
		}
	}
	if len(u.bcrypts) == 0 {
		return false
	}
	s.slow <- struct{}{}
	defer func() { <-s.slow }()
	for _, b := range u.bcrypts {
		if s.compare(b, []byte(pass)) == nil {
			return true
		}
	}
	return false
}

func bearer(t *table, token string) (*Principal, error) {
	if token == "" {
		return nil, &Error{Kind: Unauthenticated, Message: "empty bearer token", InvalidToken: true}
	}
	if len(token) > maxSecretBytes {
		return nil, &Error{Kind: Unauthenticated, Message: "bearer token longer than any this server issues", InvalidToken: true}
	}
	if u := t.tokens[sha256.Sum256([]byte(token))]; u != nil {
		return u.bearer, nil
	}
	return nil, &Error{Kind: Unauthenticated, InvalidToken: true,
		Message: "the bearer token is not valid: unknown, or no longer in the credentials file (bcrypt passwords work only as basic auth)"}
}

func (t *table) memoKey(name, pass string) [32]byte {
	m := hmac.New(sha256.New, t.key[:])
	m.Write([]byte(name))
	m.Write([]byte{0})
	m.Write([]byte(pass))
	var k [32]byte
	m.Sum(k[:0])
	return k
}

// Authorize decides whether p (nil for an anonymous request) may do req
// under the credentials in force.
func (s *Store) Authorize(p *Principal, req Request) (Decision, error) {
	t := s.cur.Load()
	if t == nil {
		return Decision{}, unauthenticated("no credentials are loaded on this server")
	}
	return authorize(t.reads, p, req)
}

// Reads says who may read under the credentials in force ("" before the
// first Load).
func (s *Store) Reads() Reads {
	if t := s.cur.Load(); t != nil {
		return t.reads
	}
	return ""
}
