//go:build race

package sim

// raceEnabled: the race detector slows every synchronisation of the
// engine by an order of magnitude, which moves real-time events against
// each other; the engine-against-simulator comparison is a timing test and
// runs without it.
const raceEnabled = true
