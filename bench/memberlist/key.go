package main

import "github.com/fdkit/fdkit/swim/wire"

func parseHexKey(s string) ([]byte, error) { return wire.ParseKey(s) }
