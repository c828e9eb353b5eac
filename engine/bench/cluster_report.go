package bench

import (
	"context"
	"fmt"
	"text/tabwriter"
	"time"

	"lidi/engine/record"
)

// What a cluster run measured, and the report of all runs.

// measure reads the run's database and simweb's witness.
func (b *clusterBench) measure(ctx context.Context, res *clusterRun, dbPath string) error {
	store, closer, err := b.o.OpenStore(dbPath)
	if err != nil {
		return err
	}
	defer closer.Close()
	err = store.Fingerprints(ctx, func(p record.FetchedPage) {
		res.stored++
		if t := b.web.Truth(p.Addr); p.Status == 200 && t.Page >= 0 {
			res.order = append(res.order, int32(t.Page))
		}
	})
	if err != nil {
		return err
	}
	ct, err := store.Counters(ctx)
	if err != nil {
		return err
	}
	res.counted = ct.Pages
	w := b.srv.Witness()
	res.requests = w.Totals.Requests
	for _, h := range w.Hosts {
		res.requests -= h.RobotsFetches
		// Two requests to a site at once, two closer than w, or a path
		// robots.txt forbids. (A Crawl-delay above politeness.max_delay
		// is capped by design: the witness's within_crawl_delay is not
		// counted.)
		if h.MaxInFlight > 1 || h.Requests >= 2 && h.MinGap >= 0 && h.MinGap < b.o.Delay*9/10 {
			res.violations++
		}
		res.violations += int(h.Disallowed)
	}
	for _, a := range w.Addresses {
		if a.MaxInFlight > 1 {
			res.violations++
		}
	}
	res.dnsWitness = w.DNS.Queries
	return nil
}

// report writes the tables and the key=value lines.
func (b *clusterBench) report(runs []*clusterRun, single *clusterRun) {
	out := b.out
	rank := b.web.PageRank()
	singleSet := make(map[int32]bool, len(single.order))
	for _, p := range single.order {
		singleSet[p] = true
	}
	singleCum := cumulative(single.order, rank)
	fractions := []int{10, 20, 30, 40, 50, 60, 70, 80, 90, 100}
	type row struct {
		pagesPerSec, overlap, coverage                  float64
		cpuMaster, cpuSlaves, bytesPerPage, msgsPerPage float64
		lost, twice, slaveDNS                           int64
		quality                                         []float64
	}
	rows := make([]row, len(runs))
	for i, r := range runs {
		w := &rows[i]
		n := float64(max(r.stored, 1))
		w.pagesPerSec = float64(r.stored) / r.elapsed.Seconds()
		w.overlap = float64(r.requests-int64(r.stored)) / n
		got := make(map[int32]bool, len(r.order))
		for _, p := range r.order {
			got[p] = true
		}
		both := 0
		for p := range singleSet {
			if got[p] {
				both++
			} else {
				w.lost++
			}
		}
		w.coverage = float64(both) / float64(max(len(singleSet), 1))
		w.twice = r.counted - int64(r.stored)
		w.cpuMaster = float64(r.cpuMaster.Microseconds()) / 1000 / n
		w.cpuSlaves = float64(r.cpuSlaves.Microseconds()) / 1000 / n
		w.bytesPerPage = float64(r.bytes) / n
		w.msgsPerPage = float64(r.msgs) / n
		if r.slaves > 0 {
			w.slaveDNS = r.dnsWitness - r.dnsMaster
		}
		cum := cumulative(r.order, rank)
		for _, f := range fractions {
			k := len(single.order) * f / 100
			if k == 0 || len(cum) == 0 {
				w.quality = append(w.quality, 0)
				continue
			}
			w.quality = append(w.quality, cum[min(k, len(cum))-1]/singleCum[k-1])
		}
	}
	fmt.Fprintln(out, "\nThroughput, CPU and communication (CPU per page: user+system time of the processes ÷ pages stored)")
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "run\tslaves\tfinished\tpages\tseconds\tpages/s\tspeed-up\tCPU ms/page master\tCPU ms/page slaves\tbytes/page\tmsgs/page\t")
	for i, r := range runs {
		w := rows[i]
		fmt.Fprintf(tw, "%s\t%d\t%v\t%d\t%.1f\t%.1f\t%.2f\t%.3f\t%.3f\t%.0f\t%.2f\t\n", r.name, r.slaves, r.finished, r.stored, r.elapsed.Seconds(), w.pagesPerSec,
			w.pagesPerSec/rows[0].pagesPerSec, w.cpuMaster, w.cpuSlaves, w.bytesPerPage, w.msgsPerPage)
	}
	tw.Flush()
	fmt.Fprintln(out, "\nCho's metrics and safety (overlap = page requests served beyond one per page stored ÷ pages stored; coverage and lost against the single process)")
	tw = tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "run\toverlap\tcoverage\tlost\tstored twice\tviolations\tslave DNS queries\t")
	for i, r := range runs {
		w := rows[i]
		fmt.Fprintf(tw, "%s\t%.4f\t%.4f\t%d\t%d\t%d\t%d\t\n", r.name, w.overlap, w.coverage, w.lost, w.twice, r.violations, w.slaveDNS)
	}
	tw.Flush()
	fmt.Fprintf(out, "\nFaults (stall = the longest time between two new pages requested; release = from the fault to the last of the faulty slave's leases given back being handed out again; goals: stall <= 3 heartbeats + a page = %s, overlap pages <= %d (1 per robot of the slave), 0 for quit-slave)\n",
		3*b.o.Heartbeat+time.Second, b.o.Robots)
	tw = tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "run\tstall s\trelease s\tgiven back\thanded out again\tlate pages applied\toverlap pages\toverlap\tlost\tstored twice\tviolations\t")
	for i, r := range runs {
		if r.fault == noFault {
			continue
		}
		w := rows[i]
		fmt.Fprintf(tw, "%s\t%.1f\t%s\t%d\t%d\t%d\t%d\t%.4f\t%d\t%d\t%d\t\n", r.name, r.stall.Seconds(), seconds(r.release), r.givenBack, r.again, r.late,
			r.requests-int64(r.stored), w.overlap, w.lost, w.twice, r.violations)
	}
	tw.Flush()
	fmt.Fprintln(out, "\nQuality: PageRank gathered by the first k% of pages stored ÷ the single process's at the same k")
	tw = tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "run\t")
	for _, f := range fractions {
		fmt.Fprintf(tw, "%d%%\t", f)
	}
	fmt.Fprintln(tw)
	for i, r := range runs {
		fmt.Fprintf(tw, "%s\t", r.name)
		for _, q := range rows[i].quality {
			fmt.Fprintf(tw, "%.3f\t", q)
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	fmt.Fprintln(out)
	for i, r := range runs {
		w := rows[i]
		fmt.Fprintf(out, "run=%s slaves=%d finished=%v pages=%d pages_per_s=%.1f overlap=%.4f overlap_pages=%d coverage=%.4f bytes_per_page=%.0f lost=%d stored_twice=%d violations=%d slave_dns_queries=%d msgs_per_page=%.2f cpu_ms_per_page_master=%.3f cpu_ms_per_page_slaves=%.3f quality_10=%.3f quality_50=%.3f stall_s=%.1f release_s=%s late_pages=%d\n",
			r.name, r.slaves, r.finished, r.stored, w.pagesPerSec, w.overlap, r.requests-int64(r.stored), w.coverage, w.bytesPerPage, w.lost, w.twice, r.violations, w.slaveDNS,
			w.msgsPerPage, w.cpuMaster, w.cpuSlaves, w.quality[0], w.quality[4], r.stall.Seconds(), seconds(r.release), r.late)
	}
}

// seconds is d in seconds, "-" when negative (nothing to measure).
func seconds(d time.Duration) string {
	if d < 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f", d.Seconds())
}
