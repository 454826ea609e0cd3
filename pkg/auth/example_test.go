package auth_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/wsfan/wsfan/pkg/auth"
	"github.com/wsfan/wsfan/pkg/client"
	"github.com/wsfan/wsfan/pkg/ethereum"
	"github.com/wsfan/wsfan/pkg/exchangetest"
)

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
		client.WithProtocol(ethereum.Protocol()),
		client.WithHeader(auth.Bearer(token)))
	if err != nil {
		panic(err)
	}
	defer c.Close()
	sub, err := c.Subscribe(ctx, []string{"newHeads"})
	fmt.Println(sub.Topics(), err)

	_, err = client.Dial(ctx, url, client.WithProtocol(ethereum.Protocol()))
	fmt.Println(err != nil) // no token, no connection
	// Output:
	// [newHeads] <nil>
	// true
}

// The demo server below stands in for a node provider, and puts the secrets
// where a deployment would: in the environment, or in a file named there.
// It returns its URL and a function that stops it.

func demoNode() (string, func()) {
	os.Setenv("NODE_TOKEN", "demo-token")
	srv := exchangetest.NewServer(ethereum.Name, exchangetest.WithBearerToken("demo-token"))
	return srv.URL(), srv.Close
}
