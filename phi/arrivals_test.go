package phi

import (
	"reflect"
	"testing"
	"unsafe"
)

// arrivals.same is ==: it tells apart two states that differ in any one
// field (a field added to arrivals and not to same fails here).
func TestArrivalsSameIsEqual(t *testing.T) {
	a := arrivals{last: 5, seen: true, maxSeq: 7, hasSeq: true, lastSeq: 7, lastHas: true, back: 2}
	b := a
	if !a.same(&b) {
		t.Fatal("equal states not same")
	}
	v := reflect.ValueOf(&b).Elem()
	for i := range v.NumField() {
		b = a
		f := v.Field(i)
		f = reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem() // unexported
		switch f.Kind() {
		case reflect.Bool:
			f.SetBool(!f.Bool())
		case reflect.Int64:
			f.SetInt(f.Int() + 1)
		case reflect.Uint64:
			f.SetUint(f.Uint() + 1)
		default:
			t.Fatalf("field %s: kind %v not handled", v.Type().Field(i).Name, f.Kind())
		}
		if a.same(&b) {
			t.Errorf("field %s differs, yet same", v.Type().Field(i).Name)
		}
	}
}
