package auth_test

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
	"github.com/wsfan/wsfan/pkg/protocol"
)

// Log in to Thalex on every connection with the account's RSA key. The
// key's id and its PEM file come from the environment, never from flags:
// THALEX_KEY_ID, and THALEX_KEY or a file named by THALEX_KEY_FILE.
func ExampleThalex() {
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
	key, err := auth.ParseThalexKey(id, []byte(pemKey))
	if err != nil {
		panic(err)
	}
	fmt.Println(key) // a key prints as its id only

	c, err := client.Dial(ctx, url,
		client.WithProtocol(protocol.Thalex()),
		client.WithOnConnect(auth.Thalex(key, auth.WithAccount("A000002"))))
	if err != nil {
		panic(err)
	}
	defer c.Close()
	sub, err := c.Subscribe(ctx, []string{"account.orders"}) // a private channel
	fmt.Println(sub.Topics(), err)
	// Output:
	// ThalexKey(demo-key)
	// [account.orders] <nil>
}

// Log in to Deribit on every connection, with a signature so the secret
// never leaves the process, and keep the token fresh while the connection
// lasts. The client id and secret come from the environment.
func ExampleDeribit() {
	url, stop := demoDeribit() // stands in for wss://www.deribit.com/ws/api/v2
	defer stop()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	id, err := auth.Secret("DERIBIT_CLIENT_ID")
	if err != nil {
		panic(err)
	}
	secret, err := auth.Secret("DERIBIT_CLIENT_SECRET")
	if err != nil {
		panic(err)
	}
	c, err := client.Dial(ctx, url,
		client.WithProtocol(protocol.Deribit()),
		client.WithOnConnect(auth.Deribit(auth.NewDeribitKey(id, secret))))
	if err != nil {
		panic(err)
	}
	defer c.Close()
	sub, err := c.Subscribe(ctx, []string{"user.orders.BTC-PERPETUAL.raw"})
	fmt.Println(sub.Topics(), err)
	// Output: [user.orders.BTC-PERPETUAL.raw] <nil>
}

// An Ethereum node provider authenticates the WebSocket handshake: send
// the bearer token as a header. The token comes from the environment.
func ExampleBearer() {
	url, stop := demoNode() // stands in for wss://mainnet.example-provider.io/ws
	defer stop()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	token, err := auth.Secret("NODE_TOKEN")
	if err != nil {
		panic(err)
	}
	c, err := client.Dial(ctx, url,
		client.WithProtocol(protocol.Ethereum()),
		client.WithHeader(auth.Bearer(token)))
	if err != nil {
		panic(err)
	}
	defer c.Close()
	sub, err := c.Subscribe(ctx, []string{"newHeads"})
	fmt.Println(sub.Topics(), err)

	_, err = client.Dial(ctx, url, client.WithProtocol(protocol.Ethereum()))
	fmt.Println(err != nil) // no token, no connection
	// Output:
	// [newHeads] <nil>
	// true
}

// The demo servers below stand in for the exchanges, and put the secrets
// where a deployment would: in the environment, or in a file named there.
// Each returns its URL and a function that stops it.

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
	srv := exchangetest.NewServer(exchangetest.Thalex,
		exchangetest.WithThalexKey("demo-key", &key.PublicKey, "A000001", "A000002"))
	return srv.URL(), func() { srv.Close(); os.RemoveAll(dir) }
}

func demoDeribit() (string, func()) {
	os.Setenv("DERIBIT_CLIENT_ID", "demo-client")
	os.Setenv("DERIBIT_CLIENT_SECRET", "demo-secret")
	srv := exchangetest.NewServer(exchangetest.Deribit, exchangetest.WithCredentials("demo-client", "demo-secret"))
	return srv.URL(), srv.Close
}

func demoNode() (string, func()) {
	os.Setenv("NODE_TOKEN", "demo-token")
	srv := exchangetest.NewServer(exchangetest.Ethereum, exchangetest.WithBearerToken("demo-token"))
	return srv.URL(), srv.Close
}
