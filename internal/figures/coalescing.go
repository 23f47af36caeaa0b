package figures

import (
	"math"

	"github.com/inferbench/inferbench/subject"
)

// Coalescing is what the streamed requests of a window had read together: their first two
// content events in one read (a TTFT then is when the later one arrived) and inter-token gaps read
// as zero. Where the server says what it sent together (ValueServerFirstTogether,
// ValueServerTogether: the mock server), it also holds how much of it the server sent together
// and how much more the client merged. Figures.Observe counts each measured request once;
// ttft_coalesced_rate, itl_coalesced_rate and a serving load's coalescing warnings all read
// these counts.
type Coalescing struct {
	Streamed      int // requests that streamed a token
	FirstTogether int // of them, those whose first two content events came in one read
	Gaps          int // their inter-token gaps (between content events)
	GapsTogether  int // of them, those read as zero (the events came in one read)
	// ServerSaid are the streamed requests whose server said what it sent together; ServerFirst
	// and ServerGaps what it sent in one write; FirstExcess and GapsExcess what the client read
	// together beyond that.
	ServerSaid, ServerFirst, FirstExcess int
	ServerGaps, GapsExcess               int
}

// together counts the content events of one request that arrived in one read with the event
// before them (the same arrival time) of its gaps, and whether its first two did.
func together(events []subject.TokenEvent) (gaps, together int, first bool) {
	for i := 1; i < len(events); i++ {
		if events[i].At.Equal(events[i-1].At) {
			together++
		}
	}
	return max(len(events)-1, 0), together, len(events) > 1 && events[1].At.Equal(events[0].At)
}

// add counts one streamed request of content events tokens; said when the server said what it
// sent together, serverFirst and serverTogether what (its values ValueServerFirstTogether and
// ValueServerTogether).
func (c *Coalescing) add(tokens []subject.TokenEvent, said bool, serverFirst, serverTogether float64) {
	gaps, together, first := together(tokens)
	c.Streamed++
	c.Gaps += gaps
	c.GapsTogether += together
	if first {
		c.FirstTogether++
	}
	if !said {
		return
	}
	c.ServerSaid++
	c.ServerGaps += int(serverTogether)
	if serverFirst > 0 {
		c.ServerFirst++
	} else if first {
		c.FirstExcess++
	}
	c.GapsExcess += max(together-int(serverTogether), 0)
}

// TTFTRate is ttft_coalesced_rate: the share of streamed requests whose first two content events
// came in one read; NaN without any.
func (c Coalescing) TTFTRate() float64 { return share(c.FirstTogether, c.Streamed) }

// ITLRate is itl_coalesced_rate: the share of inter-token gaps read as zero; NaN without any.
func (c Coalescing) ITLRate() float64 { return share(c.GapsTogether, c.Gaps) }

// ServerRates are the shares of first tokens and of gaps the server sent together, where it said
// for every request; NaN without any.
func (c Coalescing) ServerRates() (first, gaps float64) {
	return share(c.ServerFirst, c.Streamed), share(c.ServerGaps, c.Gaps)
}

// Merged returns the shares of first tokens and of inter-token gaps that the client read in one
// read with the next event where it should not have: beyond what the server says it sent
// together where it says for every request (said), all of them where it does not; NaN without
// any.
func (c Coalescing) Merged() (first, gaps float64, said bool) {
	said = c.ServerSaid == c.Streamed
	f, g := c.FirstExcess, c.GapsExcess
	if !said {
		f, g = c.FirstTogether, c.GapsTogether
	}
	return share(f, c.Streamed), share(g, c.Gaps), said
}

// share is n of a whole, NaN of none.
func share(n, of int) float64 {
	if of == 0 {
		return math.NaN()
	}
	return float64(n) / float64(of)
}
