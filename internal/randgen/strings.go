package randgen

import (
	"math/bits"
	"sync"
	"sync/atomic"
	"time"
)

// digitPairsPerDraw is how many pairs of decimal digits one 64-bit draw
// yields. Each pair uses up log2(100) bits of the draw; after 5 pairs 30 bits
// remain, so the bias per pair stays below 100/2^30.
const digitPairsPerDraw = 5

// pairs holds "00" to "99".
const pairs = "0001020304050607080910111213141516171819" +
	"2021222324252627282930313233343536373839" +
	"4041424344454647484950515253545556575859" +
	"6061626364656667686970717273747576777879" +
	"8081828384858687888990919293949596979899"

// FillString writes tmpl into dst with every '#' replaced by a random digit
// and every '@' by a random lowercase letter, as sysbench.rand.string does.
// dst must be at least len(tmpl) long.
func (r *Rand) FillString(dst []byte, tmpl string) {
	dst = dst[:len(tmpl)]
	// Digits come two at a time from a pool refilled one 64-bit draw at a
	// time; the pool lives in locals for speed and is dropped at return.
	var pool uint64
	left := 0
	for i := 0; i < len(tmpl); i++ {
		switch ch := tmpl[i]; ch {
		case '#':
			if left == 0 {
				pool = r.Uint64()
				left = digitPairsPerDraw
			}
			left--
			hi, lo := bits.Mul64(pool, 100)
			pool = lo
			if i+1 < len(tmpl) && tmpl[i+1] == '#' {
				dst[i] = pairs[2*hi]
				dst[i+1] = pairs[2*hi+1]
				i++
			} else {
				dst[i] = pairs[2*hi+1]
			}
		case '@':
			hi, _ := bits.Mul64(r.Uint64(), 26)
			dst[i] = 'a' + byte(hi)
		default:
			dst[i] = ch
		}
	}
}

// AppendString appends tmpl to dst with its '#' and '@' replaced as
// FillString does.
func (r *Rand) AppendString(dst []byte, tmpl string) []byte {
	n := len(dst)
	dst = append(dst, tmpl...)
	if len(tmpl) > 0 {
		r.FillString(dst[n:], tmpl)
	}
	return dst
}

// String returns tmpl with its '#' and '@' replaced as FillString does. It
// allocates; hot paths use FillString on a reused buffer.
func (r *Rand) String(tmpl string) string {
	return string(r.AppendString(make([]byte, 0, len(tmpl)), tmpl))
}

// Unique returns a 32-bit number that no other call in this process returns
// (until 2^32 calls), from any thread sharing this Config, in an order that
// looks random: sysbench.rand.unique. Safe for concurrent use.
func (r *Rand) Unique() uint32 { return r.uniq.next() }

// uniqueSeq walks a permutation of the 32-bit numbers: a counter goes through
// a quadratic-residue permutation modulo the prime 2^32-5 twice (Preshing's
// "unique random sequence"), so distinct counters give distinct outputs.
type uniqueSeq struct {
	once   sync.Once
	index  atomic.Uint32
	offset uint32
}

// processUnique serves Configs that were not set up through Flags or
// Defaults, so that uniqueness still holds across their threads.
var processUnique uniqueSeq

const uniquePrime = 4294967291 // largest prime below 2^32, 3 mod 4

func permute(x uint32) uint32 {
	if x >= uniquePrime {
		return x // the 5 values past the prime map to themselves
	}
	residue := uint32(uint64(x) * uint64(x) % uniquePrime)
	if x <= uniquePrime/2 {
		return residue
	}
	return uniquePrime - residue
}

// seed starts the sequence at a point derived from seed (the clock when 0).
// Only the first call has an effect.
func (u *uniqueSeq) seed(seed int64) {
	u.once.Do(func() {
		s := uint64(seed)
		if seed == 0 {
			s = uint64(time.Now().UnixNano())
		}
		a := splitmix64(&s)
		u.index.Store(permute(permute(uint32(a)) + 0x682f0161))
		u.offset = permute(permute(uint32(a>>32)) + 0x46790905)
	})
}

func (u *uniqueSeq) next() uint32 {
	i := u.index.Add(1) - 1
	return permute((permute(i) + u.offset) ^ 0x5bf03635)
}
