package standby

import (
	"strconv"
	"sync"
	"testing"
)

// BenchmarkCopiesTwoLegs is the standby's own share of a message on two
// legs that read the same heads at once, as under a blast: each leg's
// reader runs the fast path on every head, and classifies and offers
// to the merge what it does not drop (legCopies), on a goroutine of
// its own. No socket, no client: the hash, the table, the merge's lock
// and the two readers' cache lines alone. ns/op is the wall time a head
// (both legs' copies); firsts/op is the share of copies that went to the
// merge, 1 when every second copy was dropped on its reader; a program's
// loop takes what the merge delivers (delivered/op, 1 when none was
// dropped by the subscription's overflow).
func BenchmarkCopiesTwoLegs(b *testing.B) {
	_, m, read := headCopies(b)
	subs := []string{"0x01", "0xcd0c3e8af590364c09d0fa6a1210faf5"}
	var offered [2]int
	var wg sync.WaitGroup
	delivered := make(chan int)
	go func() { // the program's loop
		n := 0
		for range m.out.Subscription().C() {
			n++
		}
		delivered <- n
	}()
	b.ReportAllocs()
	b.ResetTimer()
	for leg := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var frame []byte
			for n := range b.N {
				frame = appendHead(frame[:0], subs[leg], n)
				if _, drop := read(leg, frame); !drop {
					offered[leg]++
				}
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	m.out.End(nil)
	b.ReportMetric(float64(offered[0]+offered[1])/float64(b.N), "firsts/op")
	b.ReportMetric(float64(<-delivered)/float64(b.N), "delivered/op")
}

// appendHead appends head n as headFrame writes it, without fmt.
func appendHead(dst []byte, sub string, n int) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"`...)
	dst = append(dst, sub...)
	dst = append(dst, `","result":{"number":"0x`...)
	dst = strconv.AppendUint(dst, uint64(n), 16)
	dst = append(dst, `","hash":"0x`...)
	dst = appendHex64(dst, uint64(n+1))
	dst = append(dst, `","parentHash":"0x`...)
	dst = appendHex64(dst, uint64(n))
	return append(dst, `"}}}`...)
}

// appendHex64 appends v in hex, zero-padded to 64 digits.
func appendHex64(dst []byte, v uint64) []byte {
	for range 48 {
		dst = append(dst, '0')
	}
	const digits = "0123456789abcdef"
	for i := 60; i >= 0; i -= 4 {
		dst = append(dst, digits[v>>uint(i)&0xf])
	}
	return dst
}
