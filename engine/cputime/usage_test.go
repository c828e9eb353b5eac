package cputime

import (
	"testing"
	"time"
)

// A Meter counts the CPU its thread spent, and no more than the wall time
// between StartMeter and Stop.
func TestMeterCountsItsThreadsCPU(t *testing.T) {
	const spin = 20 * time.Millisecond
	wall := time.Now()
	m := StartMeter()
	start, _ := Thread()
	for {
		if now, _ := Thread(); now-start >= spin {
			break
		}
	}
	u, ok := m.Stop()
	took := time.Since(wall)
	if !ok {
		t.Skip("no thread usage on this system")
	}
	if u.CPU < spin || u.CPU > took {
		t.Errorf("CPU %s for a %s spin in %s of wall time", u.CPU, spin, took)
	}
	if u.Switches < 0 || u.Sleeps < 0 || u.Faults < 0 {
		t.Errorf("negative counts: %+v", u)
	}
}
