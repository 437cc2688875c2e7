package transport_test

import (
	"context"
	"fmt"

	"github.com/fdkit/fdkit/swim/transport"
)

func Example() {
	a, _ := transport.Listen(transport.Config{}) // 127.0.0.1, kernel-chosen port
	b, _ := transport.Listen(transport.Config{})
	defer a.Close()
	defer b.Close()

	_ = a.Send(b.LocalAddr(), []byte("ping"))
	p := <-b.Packets()
	fmt.Println(string(p.Data), p.From == a.LocalAddr())
	fmt.Println(a.Send(b.LocalAddr(), make([]byte, 1401)))
	// Output:
	// ping true
	// transport: packet larger than MaxPacketSize: 1401 > 1400 bytes
}

// A stream listener answering each frame with the frame reversed, and a
// dialled connection sending one.
func ExampleListenStream() {
	l, _ := transport.ListenStream(transport.StreamConfig{}, func(c *transport.Conn) {
		for {
			b, err := c.ReadFrame()
			if err != nil {
				return // io.EOF when the peer closed, or why the stream was cut
			}
			for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
				b[i], b[j] = b[j], b[i]
			}
			_ = c.WriteFrame(b)
		}
	})
	defer l.Close()

	c, _ := transport.DialStream(context.Background(), l.LocalAddr(), transport.StreamConfig{})
	defer c.Close()
	_ = c.WriteFrame([]byte("ping"))
	b, _ := c.ReadFrame()
	fmt.Println(string(b))
	fmt.Println(c.WriteFrame(make([]byte, 1401)))
	// Output:
	// gnip
	// transport: stream frame longer than the limit: 1401 bytes, limit 1400
}
