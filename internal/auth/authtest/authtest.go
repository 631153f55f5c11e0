// Package authtest makes what tests of authentication and TLS need: a
// throw-away certificate authority, certificates it signs, written as PEM
// files, and credentials files. It is for tests only.
package authtest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heureka-project/heureka/internal/auth"
)

// CA is a certificate authority for one test.
type CA struct {
	t      testing.TB
	dir    string
	cert   *x509.Certificate
	key    *ecdsa.PrivateKey
	serial atomic.Int64
	// CertFile is the CA's certificate as PEM, for clients' CA settings.
	CertFile string
}

// NewCA makes a CA whose files live in a temporary directory of t.
func NewCA(t testing.TB, name string) *CA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	ca := &CA{t: t, dir: t.TempDir(), cert: cert, key: key}
	ca.serial.Store(1)
	ca.CertFile = filepath.Join(ca.dir, "ca.pem")
	writePEM(t, ca.CertFile, "CERTIFICATE", der)
	return ca
}

// Cert is an issued certificate and its files.
type Cert struct {
	CertFile, KeyFile string
	Serial            *big.Int
	// TLS is the pair, ready for a tls.Config.
	TLS tls.Certificate
}

// Issue signs a certificate for commonName, valid for serving on
// 127.0.0.1, ::1 and localhost and for client authentication, and writes
// it to NAME.pem and NAME-key.pem in the CA's directory (replacing earlier
// files of that name, as a renewal does).
func (ca *CA) Issue(file, commonName string) *Cert {
	ca.t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		ca.t.Fatal(err)
	}
	serial := big.NewInt(ca.serial.Add(1))
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: commonName},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		ca.t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		ca.t.Fatal(err)
	}
	c := &Cert{
		CertFile: filepath.Join(ca.dir, file+".pem"),
		KeyFile:  filepath.Join(ca.dir, file+"-key.pem"),
		Serial:   serial,
	}
	// Key first: a reader of the pair never sees a new certificate with
	// an old key for long (tests reload only after both are written).
	writePEM(ca.t, c.KeyFile, "EC PRIVATE KEY", kder)
	writePEM(ca.t, c.CertFile, "CERTIFICATE", der)
	c.TLS, err = tls.X509KeyPair(pemBytes("CERTIFICATE", der), pemBytes("EC PRIVATE KEY", kder))
	if err != nil {
		ca.t.Fatal(err)
	}
	return c
}

// Pool is a pool holding the CA, for tls.Config.RootCAs or ClientCAs.
func (ca *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.cert)
	return p
}

func pemBytes(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

// writePEM writes atomically (temporary file, then rename), as a
// certificate renewal tool does.
func writePEM(t testing.TB, path, typ string, der []byte) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, pemBytes(typ, der), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// User is a user of a credentials file with its clear secret.
type User struct {
	auth.User
	// Password is the clear secret: a password hashed with bcrypt (at
	// the lowest cost, to keep tests fast), or a token when Token is set.
	Password string
	Token    bool
}

// WriteCredentials writes a credentials file holding users (their
// secrets hashed) to path, atomically.
func WriteCredentials(t testing.TB, path string, reads auth.Reads, users ...User) {
	t.Helper()
	f := auth.File{Reads: reads}
	for _, u := range users {
		fu := u.User
		if u.Password != "" {
			if u.Token {
				fu.Secrets = append(fu.Secrets, auth.HashToken(u.Password))
			} else {
				h, err := auth.HashPassword(u.Password, 4)
				if err != nil {
					t.Fatal(err)
				}
				fu.Secrets = append(fu.Secrets, h)
			}
		}
		f.Users = append(f.Users, fu)
	}
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	WriteFile(t, path, b)
}

// WriteFile writes b to path atomically.
func WriteFile(t testing.TB, path string, b []byte) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// Call sends one JSON request with c, the headers given as name, value
// pairs, and returns the status, the body and the serial number of the
// certificate the server showed (nil over plain HTTP). It fails t if the
// request cannot be sent.
func Call(t testing.TB, c *http.Client, method, url, body string, hdr ...string) (int, string, *big.Int) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var serial *big.Int
	if resp.TLS != nil && len(resp.TLS.PeerCertificates) > 0 {
		serial = resp.TLS.PeerCertificates[0].SerialNumber
	}
	return resp.StatusCode, string(b), serial
}
