package transport_test

import (
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
