// Package testcerts makes certificates for tests at test time: a CA, a
// server certificate for 127.0.0.1 and localhost, and a client
// certificate, written as PEM files.
package testcerts

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Set is the files of one CA and the certificates it signed, in a
// directory of the test's.
type Set struct {
	Dir                                              string
	CA, ServerCert, ServerKey, ClientCert, ClientKey string          // paths
	Pool                                             *x509.CertPool  // the CA, to trust
	Client                                           tls.Certificate // the client's, to present
}

// New writes a Set in a new temporary directory of t.
func New(t testing.TB) *Set {
	t.Helper()
	dir := t.TempDir()
	s := &Set{Dir: dir, CA: filepath.Join(dir, "ca.crt"),
		ServerCert: filepath.Join(dir, "server.crt"), ServerKey: filepath.Join(dir, "server.key"),
		ClientCert: filepath.Join(dir, "client.crt"), ClientKey: filepath.Join(dir, "client.key")}
	caKey := key(t)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "chatq test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	write(t, s.CA, "CERTIFICATE", caDER)
	s.Pool = x509.NewCertPool()
	s.Pool.AddCert(ca)
	for i, c := range []struct {
		cert, key string
		usage     x509.ExtKeyUsage
	}{{s.ServerCert, s.ServerKey, x509.ExtKeyUsageServerAuth}, {s.ClientCert, s.ClientKey, x509.ExtKeyUsageClientAuth}} {
		k := key(t)
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(int64(i + 2)), Subject: pkix.Name{CommonName: filepath.Base(c.cert)},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{c.usage},
			DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &k.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		write(t, c.cert, "CERTIFICATE", der)
		kDER, err := x509.MarshalECPrivateKey(k)
		if err != nil {
			t.Fatal(err)
		}
		write(t, c.key, "EC PRIVATE KEY", kDER)
	}
	if s.Client, err = tls.LoadX509KeyPair(s.ClientCert, s.ClientKey); err != nil {
		t.Fatal(err)
	}
	return s
}

func key(t testing.TB) *ecdsa.PrivateKey {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func write(t testing.TB, path, typ string, der []byte) {
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}
