package wire

import (
	"database/sql/driver"
	"fmt"
	"reflect"
	"time"
)

// Arguments: the fast paths (Stmt.Exec, Interpolate) switch on the common
// Go types themselves; anything else goes through toBase, which reduces it
// to one of them as database/sql would: driver.Valuer (sql.Null* among
// them), pointers (nil is NULL) and named types of a basic kind.

// maxIndirections bounds toBase's chains (a pointer to a Valuer that
// returns a pointer...).
const maxIndirections = 4

// toBase reduces a to nil, bool, int64, uint64, float64, string, []byte or
// time.Time.
func toBase(a any) (any, error) {
	for range maxIndirections {
		switch v := a.(type) {
		case nil, bool, int64, uint64, float64, string, time.Time:
			return a, nil
		case []byte:
			if v == nil {
				return nil, nil
			}
			return a, nil
		}
		rv := reflect.ValueOf(a)
		if rv.Kind() == reflect.Pointer && rv.IsNil() {
			return nil, nil
		}
		if vr, ok := a.(driver.Valuer); ok {
			v, err := vr.Value()
			if err != nil {
				return nil, fmt.Errorf("wire: argument of type %T: %w", a, err)
			}
			a = v
			continue
		}
		switch rv.Kind() {
		case reflect.Pointer:
			a = rv.Elem().Interface()
			continue
		case reflect.Bool:
			return rv.Bool(), nil
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			return rv.Int(), nil
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
			return rv.Uint(), nil
		case reflect.Float32, reflect.Float64:
			return rv.Float(), nil
		case reflect.String:
			return rv.String(), nil
		case reflect.Slice:
			if rv.Type().Elem().Kind() == reflect.Uint8 {
				if rv.IsNil() {
					return nil, nil
				}
				return rv.Bytes(), nil
			}
		}
		return nil, fmt.Errorf("wire: unsupported argument type %T", a)
	}
	return nil, fmt.Errorf("wire: argument of type %T: too many indirections", a)
}

// datetime checks that t fits a DATETIME and returns it in loc.
func datetime(t time.Time, loc *time.Location) (time.Time, error) {
	if t.IsZero() {
		return t, nil
	}
	t = t.In(loc)
	if y := t.Year(); y < 0 || y > 9999 {
		return t, fmt.Errorf("wire: time %v: year outside 0-9999", t)
	}
	return t, nil
}
