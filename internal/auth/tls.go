package auth

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"

	"github.com/heureka-project/heureka"
)

// KeyPair is a certificate and its key, read from two PEM files and
// replaced by Reload, so that a renewed certificate is served without a
// restart. Hand GetCertificate to a server's tls.Config and
// GetClientCertificate to a client's.
type KeyPair struct {
	certFile, keyFile string
	cur               atomic.Pointer[tls.Certificate]
}

// LoadKeyPair reads certFile and keyFile.
func LoadKeyPair(certFile, keyFile string) (*KeyPair, error) {
	k := &KeyPair{certFile: certFile, keyFile: keyFile}
	if err := k.Reload(); err != nil {
		return nil, err
	}
	return k, nil
}

// Reload reads the files again. When they do not hold a matching
// certificate and key, the pair in use stays and the error says why.
func (k *KeyPair) Reload() error {
	c, err := tls.LoadX509KeyPair(k.certFile, k.keyFile)
	if err != nil {
		return fmt.Errorf("TLS key pair %s, %s: %w", k.certFile, k.keyFile, err)
	}
	k.cur.Store(&c)
	return nil
}

// Certificate returns the pair in use.
func (k *KeyPair) Certificate() *tls.Certificate { return k.cur.Load() }

// GetCertificate is for tls.Config.GetCertificate.
func (k *KeyPair) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	return k.cur.Load(), nil
}

// GetClientCertificate is for tls.Config.GetClientCertificate.
func (k *KeyPair) GetClientCertificate(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
	return k.cur.Load(), nil
}

// CheckServerTLS checks the files a server is given to serve HTTPS with:
// a certificate and its key together or neither, and client CAs only with
// them (mutual TLS is TLS first). Its errors are *heureka.ConfigError
// naming TLSCert, TLSKey or TLSClientCA.
func CheckServerTLS(certFile, keyFile, clientCAFile string) error {
	switch {
	case certFile == "" && keyFile != "":
		return heureka.InvalidConfig("TLSCert", nil, "is empty while TLSKey is set: give both or neither")
	case certFile != "" && keyFile == "":
		return heureka.InvalidConfig("TLSKey", nil, "is empty while TLSCert is set: give both or neither")
	case clientCAFile != "" && certFile == "":
		return heureka.InvalidConfig("TLSClientCA", clientCAFile, "needs TLSCert and TLSKey (mutual TLS is TLS first)")
	}
	return nil
}

// ServerTLS reads those files into a server's TLS configuration, nil
// without certFile: TLS 1.2 at least, the certificate served from the
// KeyPair it also returns (for Reload), and with clientCAFile a client
// certificate verified when one is offered. A client without one still
// connects, and authenticates otherwise. Errors are *heureka.ConfigError,
// as CheckServerTLS's.
func ServerTLS(certFile, keyFile, clientCAFile string) (*tls.Config, *KeyPair, error) {
	if err := CheckServerTLS(certFile, keyFile, clientCAFile); err != nil || certFile == "" {
		return nil, nil, err
	}
	kp, err := LoadKeyPair(certFile, keyFile)
	if err != nil {
		return nil, nil, heureka.InvalidConfig("TLSCert", nil, "%v", err)
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: kp.GetCertificate}
	if clientCAFile != "" {
		pool, err := LoadCertPool(clientCAFile)
		if err != nil {
			return nil, nil, heureka.InvalidConfig("TLSClientCA", nil, "%v", err)
		}
		tc.ClientCAs, tc.ClientAuth = pool, tls.VerifyClientCertIfGiven
	}
	return tc, kp, nil
}

// LoadCertPool reads a PEM bundle of CA certificates.
func LoadCertPool(file string) (*x509.CertPool, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("%s: no PEM certificate in it", file)
	}
	return pool, nil
}

// AuthorizationHeader turns a client secret as kept in a file or an
// environment variable into an Authorization header value: "user:password"
// becomes basic auth, anything else (without a ':') a bearer token.
// Surrounding white space, such as a file's final newline, is ignored.
func AuthorizationHeader(secret string) (string, error) {
	secret = strings.TrimSpace(secret)
	if secret == "" {
		return "", errors.New("empty: want user:password or a token")
	}
	if strings.ContainsAny(secret, "\r\n") {
		return "", errors.New("more than one line: want user:password or a token")
	}
	if name, _, ok := strings.Cut(secret, ":"); ok {
		if err := validName(name); err != nil {
			return "", fmt.Errorf("user:password: %v", err)
		}
		return "Basic " + base64.StdEncoding.EncodeToString([]byte(secret)), nil
	}
	return "Bearer " + secret, nil
}
