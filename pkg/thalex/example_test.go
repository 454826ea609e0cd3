package thalex_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/wsfan/wsfan/pkg/auth"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/exchangetest"
	"github.com/wsfan/wsfan/pkg/thalex"
)

// Log in to Thalex on every connection with the account's RSA key. The
// key's id and its PEM file come from the environment, never from flags:
// THALEX_KEY_ID, and THALEX_KEY or a file named by THALEX_KEY_FILE.
func ExampleLogin() {
	url, stop := demoThalex() // stands in for wss://thalex.com/ws/api/v2
	defer stop()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	id, err := auth.Secret("THALEX_KEY_ID")
	if err != nil {
		panic(err)
	}
	pemKey, err := auth.Secret("THALEX_KEY")
	if err != nil {
		panic(err)
	}
	key, err := thalex.ParseKey(id, []byte(pemKey))
	if err != nil {
		panic(err)
	}
	fmt.Println(key) // a key prints as its id only

	c, err := client.Dial(ctx, url,
		client.WithProtocol(thalex.Protocol()),
		client.WithOnConnect(thalex.Login(key, thalex.WithAccount("A000002"))))
	if err != nil {
		panic(err)
	}
	defer c.Close()
	sub, err := c.Subscribe(ctx, []string{"account.orders"}) // a private channel
	fmt.Println(sub.Topics(), err)
	// Output:
	// thalex.Key(demo-key)
	// [account.orders] <nil>
}

// The demo server below stands in for the exchange, and puts the secrets
// where a deployment would: in the environment, or in a file named there.
// It returns its URL and a function that stops it.

func demoThalex() (string, func()) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	dir, err := os.MkdirTemp("", "wsfan-example")
	if err != nil {
		panic(err)
	}
	path := filepath.Join(dir, "thalex.pem")
	der := x509.MarshalPKCS1PrivateKey(key)
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		panic(err)
	}
	os.Setenv("THALEX_KEY_ID", "demo-key")
	os.Setenv("THALEX_KEY_FILE", path)
	srv := exchangetest.NewServer(thalex.Name,
		exchangetest.WithLogin(thalex.NewServerLogin(thalex.ServerKey{ID: "demo-key", Public: &key.PublicKey, Accounts: []string{"A000001", "A000002"}})))
	return srv.URL(), func() { srv.Close(); os.RemoveAll(dir) }
}
