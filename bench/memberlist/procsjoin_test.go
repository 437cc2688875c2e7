package main

import (
	"slices"
	"strings"
	"testing"
)

const udpTable = `   sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode ref pointer drops            
  121: 0100007F:D2D0 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 4177921 2 00000000a754aa84 17      
  172: 0100007F:9303 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 4175857 2 00000000d9d9d9ce 5       
  173: 00000000:0044 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 4175858 2 00000000d9d9d9cf 1000    
`

// The drops of the sockets at the asked ports only: 0xD2D0 = 53968 and
// 0x9303 = 37635, 17 + 5; port 68's 1000 is not the group's.
func TestParseUDPDrops(t *testing.T) {
	got, err := parseUDPDrops(strings.NewReader(udpTable), map[uint16]bool{53968: true, 37635: true, 9: true})
	if err != nil || got != 22 {
		t.Fatalf("got %d, %v; want 22, nil", got, err)
	}
	got, err = parseUDPDrops(strings.NewReader(udpTable), map[uint16]bool{68: true})
	if err != nil || got != 1000 {
		t.Fatalf("port 68: got %d, %v; want 1000, nil", got, err)
	}
}

// A table that is not one is refused with the line and field at fault,
// never read as 0 drops.
func TestParseUDPDropsHostile(t *testing.T) {
	head := strings.SplitN(udpTable, "\n", 2)[0] + "\n"
	for name, body := range map[string]string{
		"line 2: 3 fields":       "  1: 0100007F:D2D0 x\n",
		"line 2: local_address":  "  1: 0100007FD2D0 00000000:0000 07 0:0 0:0 0 0 0 1 2 p 5\n",
		"line 2: local_address ": "  1: 0100007F:XYZ 00000000:0000 07 0:0 0:0 0 0 0 1 2 p 5\n",
		"line 2: drops":          "  1: 0100007F:D2D0 00000000:0000 07 0:0 0:0 0 0 0 1 2 p -5\n",
	} {
		_, err := parseUDPDrops(strings.NewReader(head+body), map[uint16]bool{53968: true})
		if err == nil || !strings.HasPrefix(err.Error(), strings.TrimSpace(name)) {
			t.Errorf("%s: error %v", name, err)
		}
	}
}

func TestLacking(t *testing.T) {
	got := lacking([]string{"m02", "m00", "m03"}, 5, Params{})
	if !slices.Equal(got, []string{"m01", "m04"}) {
		t.Fatalf("got %v, want [m01 m04]", got)
	}
	if got := lacking([]string{"m00", "m01"}, 2, Params{NameLen: 3}); len(got) != 0 {
		t.Fatalf("a full view lacks %v", got)
	}
}

// kill-dropped tells every member but the victim the victim's address,
// whichever member the victim is.
func TestDropOrdersNameTheVictim(t *testing.T) {
	procs := []*memberProc{{name: "m00"}, {name: "m01"}, {name: "m02"}, {name: "m03"}}
	addrs := []string{"127.0.0.1:7000", "127.0.0.1:7001", "127.0.0.1:7002", "127.0.0.1:7003"}
	for vi, victim := range procs {
		orders := dropOrders(procs, addrs, victim)
		if len(orders) != len(procs)-1 {
			t.Fatalf("victim %s: %d orders, want %d", victim.name, len(orders), len(procs)-1)
		}
		if _, ok := orders[victim]; ok {
			t.Errorf("victim %s is told to drop", victim.name)
		}
		for p, line := range orders {
			if want := "drop " + addrs[vi]; line != want {
				t.Errorf("victim %s: %s is told %q, want %q", victim.name, p.name, line, want)
			}
		}
	}
}
