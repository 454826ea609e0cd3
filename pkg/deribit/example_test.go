package deribit_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/wsfan/wsfan/pkg/auth"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/deribit"
	"github.com/wsfan/wsfan/pkg/exchangetest"
)

// Log in to Deribit on every connection, with a signature so the secret
// never leaves the process, and keep the token fresh while the connection
// lasts. The client id and secret come from the environment.
func ExampleLogin() {
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
		client.WithProtocol(deribit.Protocol()),
		client.WithOnConnect(deribit.Login(deribit.NewKey(id, secret))))
	if err != nil {
		panic(err)
	}
	defer c.Close()
	sub, err := c.Subscribe(ctx, []string{"user.orders.BTC-PERPETUAL.raw"})
	fmt.Println(sub.Topics(), err)
	// Output: [user.orders.BTC-PERPETUAL.raw] <nil>
}

// The demo server below stands in for the exchange, and puts the secrets
// where a deployment would: in the environment, or in a file named there.
// It returns its URL and a function that stops it.

func demoDeribit() (string, func()) {
	os.Setenv("DERIBIT_CLIENT_ID", "demo-client")
	os.Setenv("DERIBIT_CLIENT_SECRET", "demo-secret")
	srv := exchangetest.NewServer(deribit.Name, exchangetest.WithLogin(deribit.NewServerLogin("demo-client", "demo-secret")))
	return srv.URL(), srv.Close
}
