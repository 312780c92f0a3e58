// peers.go - Go peer benchmarks for libsmarm (DESIGN.md section 7).
//
// Usage:
//
//	go run peers.go [-procs N] [-runs R] [-budget S] [workload...]
//
// With no workload (or "all") every workload is run.  Output is one CSV line
// per workload on stdout:
//
//	WORKLOAD,go,GOMAXPROCS,ns_per_op
//
// For idle_bytes the last column is resident bytes per parked goroutine, for
// fairness a ratio (max/min of call-free spinners' progress) and for
// wake_latency the p99 lateness of a 10 ms time.Sleep among spinners, in ns.
// Per-run figures go to stderr.
//
// Every workload runs in a fresh child process (this program re-executes
// itself with -child), so garbage and dead goroutines left by one workload
// (skynet leaves ~1.1M dead g structs behind) cannot bias the next one.
// Inside that child a timed workload gets one warm-up run and then R timed
// runs (default 5); the median is printed.  idle_bytes must be measured in a
// process that has never run a goroutine of that size class before, so each
// of its samples is a separate child and the median of R samples is printed.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

const (
	spawnN      = 100000
	chainN      = 100000
	pingN       = 1000000
	ringSize    = 1000
	ringN       = 1000000
	yieldN      = 1000000
	skynetN     = 1000000
	skynetDiv   = 10
	skynetSum   = int64(499999500000)
	callN       = 1000000
	castN       = 1000000
	idleN       = 100000
	fairSettle  = 100 * time.Millisecond // spinners all started
	fairWindow  = time.Second            // the measured window
	fairStarved = 1e9                    // the ratio printed for a 0 count
	wakeN       = 50                     // sleeps per wake_latency run
	wakeSleep   = 10 * time.Millisecond
	spinChunk   = 1024 // iterations between counter stores
)

type workload struct {
	name string
	run  func() float64 // one run; returns ns per op (bytes for idle_bytes)
}

var workloads = []workload{
	{"spawn_join", spawnJoin},
	{"chained_spawn", chainedSpawn},
	{"ping_pong_rtt", pingPong},
	{"ring_hop", ringHop},
	{"yield", yieldBench},
	{"skynet_actor", skynetBench},
	{"gen_server_call", genServerCall},
	{"gen_server_cast", genServerCast},
	{"idle_bytes", idleBytes},
	{"fairness", fairness},
	{"fairness_uneven", fairnessUneven},
	{"wake_latency", wakeLatency},
}

// notes holds the per-run detail of fairness and wake_latency (min/max
// counts, p50/p99 ms) for the "# go-note" line; noteWhat says what it is.
var (
	notes    []string
	noteWhat = map[string]string{"fairness": "min/max count", "fairness_uneven": "min/max count", "wake_latency": "p50/p99 ms", "idle_bytes": "create ns/goroutine wall/cpu"}
)

func find(name string) *workload {
	for i := range workloads {
		if workloads[i].name == name {
			return &workloads[i]
		}
	}
	return nil
}

// ---------------------------------------------------------------------------
// Workloads

// spawn_join: main spawns N goroutines that exit at once (each signals a
// WaitGroup) and waits for all of them.  ns per goroutine.
func spawnJoin() float64 {
	var wg sync.WaitGroup
	t0 := time.Now()
	wg.Add(spawnN)
	for i := 0; i < spawnN; i++ {
		go wg.Done()
	}
	wg.Wait()
	return float64(time.Since(t0).Nanoseconds()) / spawnN
}

// chained_spawn: each goroutine spawns the next; the last one signals main.
// ns per goroutine.
func chain(n int, done chan<- struct{}) {
	if n == 0 {
		done <- struct{}{}
		return
	}
	go chain(n-1, done)
}

func chainedSpawn() float64 {
	done := make(chan struct{})
	t0 := time.Now()
	go chain(chainN-1, done) // chainN goroutines in total
	<-done
	return float64(time.Since(t0).Nanoseconds()) / chainN
}

// ping_pong_rtt: two goroutines bounce one message over unbuffered channels
// N times.  ns per round trip.
func pingPong() float64 {
	ping := make(chan int)
	pong := make(chan int)
	done := make(chan struct{})
	go func() { // ponger
		for v := range ping {
			pong <- v
		}
	}()
	t0 := time.Now()
	go func() { // pinger
		for i := 0; i < pingN; i++ {
			ping <- i
			<-pong
		}
		done <- struct{}{}
	}()
	<-done
	el := time.Since(t0)
	close(ping)
	return float64(el.Nanoseconds()) / pingN
}

// ring_hop: ringSize goroutines connected in a ring by unbuffered channels
// pass a counter around; every hop decrements it; the goroutine that sees 0
// tells main.  ns per hop.
func ringHop() float64 {
	chans := make([]chan int, ringSize)
	for i := range chans {
		chans[i] = make(chan int)
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(ringSize)
	for i := 0; i < ringSize; i++ {
		in, out := chans[i], chans[(i+1)%ringSize]
		go func() {
			defer wg.Done()
			for v := range in {
				if v == 0 {
					done <- struct{}{}
					continue
				}
				out <- v - 1
			}
		}()
	}
	t0 := time.Now()
	chans[0] <- ringN
	<-done
	el := time.Since(t0)
	// Only the finished token existed and it is consumed: every ring member
	// is blocked in receive, so closing the channels ends them all.
	for _, c := range chans {
		close(c)
	}
	wg.Wait()
	return float64(el.Nanoseconds()) / ringN
}

// yield: two goroutines per P each call runtime.Gosched() N times.
// ns per yield = total / (2N): one P's cost per yield.
func yieldBench() float64 {
	var start, wg sync.WaitGroup
	n := 2 * runtime.GOMAXPROCS(0)
	start.Add(1)
	wg.Add(n)
	body := func() {
		defer wg.Done()
		start.Wait()
		for i := 0; i < yieldN; i++ {
			runtime.Gosched()
		}
	}
	for i := 0; i < n; i++ {
		go body()
	}
	t0 := time.Now()
	start.Done()
	wg.Wait()
	return float64(time.Since(t0).Nanoseconds()) / (2 * yieldN)
}

// skynet_actor: a 10-ary tree of goroutines; each leaf sends its number,
// each inner node sums its children and sends the sum up.  ns per leaf.
func skynet(out chan<- int64, num int64, size int64) {
	if size == 1 {
		out <- num
		return
	}
	sub := size / skynetDiv
	ch := make(chan int64, skynetDiv)
	for i := int64(0); i < skynetDiv; i++ {
		go skynet(ch, num+i*sub, sub)
	}
	var sum int64
	for i := 0; i < skynetDiv; i++ {
		sum += <-ch
	}
	out <- sum
}

func skynetBench() float64 {
	out := make(chan int64, 1)
	t0 := time.Now()
	go skynet(out, 0, skynetN)
	sum := <-out
	el := time.Since(t0)
	if sum != skynetSum {
		fmt.Fprintf(os.Stderr, "skynet_actor: wrong sum %d, want %d\n", sum, skynetSum)
		os.Exit(1)
	}
	return float64(el.Nanoseconds()) / skynetN
}

// gen_server_call: a server goroutine answers requests that carry their own
// reply channel (the channel analogue of gen_server:call).  ns per call.
type request struct {
	arg   int
	reply chan int
}

func genServerCall() float64 {
	reqs := make(chan request)
	go func() {
		state := 0
		for r := range reqs {
			state += r.arg
			r.reply <- state
		}
	}()
	done := make(chan struct{})
	t0 := time.Now()
	go func() {
		reply := make(chan int)
		for i := 0; i < callN; i++ {
			reqs <- request{1, reply}
			if <-reply != i+1 {
				fmt.Fprintln(os.Stderr, "gen_server_call: wrong reply")
				os.Exit(1)
			}
		}
		done <- struct{}{}
	}()
	<-done
	el := time.Since(t0)
	close(reqs)
	return float64(el.Nanoseconds()) / callN
}

// gen_server_cast: N one-way messages into a server goroutine through a
// buffered channel (casts do not wait for the server), then one request
// with a reply channel that answers once every cast was served; ns per cast.
type castMsg struct {
	arg   int
	reply chan int // nil for a cast
}

func genServerCast() float64 {
	msgs := make(chan castMsg, 1024)
	go func() {
		state := 0
		for m := range msgs {
			if m.reply == nil {
				state += m.arg
			} else {
				m.reply <- state
			}
		}
	}()
	t0 := time.Now()
	for i := 0; i < castN; i++ {
		msgs <- castMsg{1, nil}
	}
	reply := make(chan int)
	msgs <- castMsg{0, reply}
	if <-reply != castN {
		fmt.Fprintln(os.Stderr, "gen_server_cast: wrong count")
		os.Exit(1)
	}
	el := time.Since(t0)
	close(msgs)
	return float64(el.Nanoseconds()) / castN
}

// idle_bytes: N goroutines, each parked on a receive from its own unbuffered
// channel.  Result: growth of VmRSS (after GC and returning free memory to
// the OS) divided by N.  The figure includes the goroutine's g struct, its
// stack and its channel (the goroutine's "mailbox").
// Note: wall and CPU ns per goroutine from the first go statement until all
// are ready, as smarm-bench notes for its idle_bytes workloads.
func rssBytes() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		fmt.Fprintln(os.Stderr, "idle_bytes:", err)
		os.Exit(1)
	}
	f := strings.Fields(string(b))
	pages, _ := strconv.ParseInt(f[1], 10, 64)
	return pages * int64(os.Getpagesize())
}

// cpuNs: the process's CPU time (user and system, every thread), ns.
func cpuNs() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

func idleBytes() float64 {
	chans := make([]chan int, idleN)
	for i := range chans { // touch the slice so it is in the baseline
		chans[i] = nil
	}
	var ready, exited sync.WaitGroup
	debug.FreeOSMemory()
	before := rssBytes()

	ready.Add(idleN)
	exited.Add(idleN)
	t0, c0 := time.Now(), cpuNs()
	for i := range chans {
		c := make(chan int)
		chans[i] = c
		go func() {
			ready.Done()
			<-c
			exited.Done()
		}()
	}
	ready.Wait()
	notes = append(notes, fmt.Sprintf("%.0f/%.0f",
		float64(time.Since(t0).Nanoseconds())/idleN,
		float64(cpuNs()-c0)/idleN))
	runtime.Gosched()
	debug.FreeOSMemory()
	after := rssBytes()

	for _, c := range chans { // release them
		c <- 1
	}
	exited.Wait()
	return float64(after-before) / idleN
}

// spinner: one call-free spinning goroutine's counter, alone on its cache
// line.  The sync/atomic calls are compiler intrinsics on amd64, so the loop
// has no call and no safe point: only asynchronous preemption (sysmon's
// signal, Go >= 1.14) switches it out.
type spinner struct {
	count uint64 // iterations so far, stored atomically every spinChunk
	x     uint64 // the loop's result, kept live
	_     [48]byte
}

func spin(s *spinner, stop *uint32, wg *sync.WaitGroup) {
	defer wg.Done()
	x, n := uint64(1), uint64(0)
	for atomic.LoadUint32(stop) == 0 {
		for i := 0; i < spinChunk; i++ {
			x = x*6364136223846793005 + 1442695040888963407
		}
		n += spinChunk
		atomic.StoreUint64(&s.count, n)
	}
	s.x = x
}

// startSpinners starts n spinners; the returned function stops and joins them.
func startSpinners(n int) ([]spinner, func()) {
	sp := make([]spinner, n)
	var stop uint32
	var wg sync.WaitGroup
	wg.Add(n)
	for i := range sp {
		go spin(&sp[i], &stop, &wg)
	}
	return sp, func() {
		atomic.StoreUint32(&stop, 1)
		wg.Wait()
	}
}

// fairness: 3*GOMAXPROCS spinners (fairness_uneven: 2*GOMAXPROCS+1); after a
// settling pause main snapshots the counters, sleeps fairWindow, snapshots
// again and stops them.  Result: max/min of the spinners' progress over the
// window (a ratio, not ns).
func fairness() float64 { return fairnessOf(3 * runtime.GOMAXPROCS(0)) }

func fairnessUneven() float64 { return fairnessOf(2*runtime.GOMAXPROCS(0) + 1) }

func fairnessOf(n int) float64 {
	sp, stop := startSpinners(n)
	time.Sleep(fairSettle)
	base := make([]uint64, len(sp))
	for i := range sp {
		base[i] = atomic.LoadUint64(&sp[i].count)
	}
	time.Sleep(fairWindow)
	lo, hi := ^uint64(0), uint64(0)
	for i := range sp {
		d := atomic.LoadUint64(&sp[i].count) - base[i]
		if d < lo {
			lo = d
		}
		if d > hi {
			hi = d
		}
	}
	stop()
	notes = append(notes, fmt.Sprintf("%d/%d", lo, hi))
	if lo == 0 {
		return fairStarved
	}
	return float64(hi) / float64(lo)
}

// wake_latency: 2*GOMAXPROCS spinners saturate every P while a goroutine does
// wakeN time.Sleep(10ms) and records how late each wake-up was.  Result: p99
// lateness in ns (nearest rank: of 50 samples, the largest).
func wakeLatency() float64 {
	_, stop := startSpinners(2 * runtime.GOMAXPROCS(0))
	late := make([]float64, wakeN)
	done := make(chan bool)
	go func() {
		for i := range late {
			t0 := time.Now()
			time.Sleep(wakeSleep)
			el := time.Since(t0)
			if el < wakeSleep {
				done <- false
				return
			}
			late[i] = float64((el - wakeSleep).Nanoseconds())
		}
		done <- true
	}()
	ok := <-done
	stop()
	if !ok {
		fmt.Fprintln(os.Stderr, "wake_latency: the sleeper woke early")
		os.Exit(1)
	}
	sort.Float64s(late)
	rank := func(pct int) float64 { return late[(len(late)*pct+99)/100-1] }
	notes = append(notes, fmt.Sprintf("%.3f/%.3f", rank(50)/1e6, rank(99)/1e6))
	return rank(99)
}

// ---------------------------------------------------------------------------
// Driver

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// fmtFigure: 3 decimals below 10 (the fairness ratios), else 1, as
// smarm-bench prints.
func fmtFigure(x float64) string {
	if x < 10 {
		return strconv.FormatFloat(x, 'f', 3, 64)
	}
	return strconv.FormatFloat(x, 'f', 1, 64)
}

func fmtRuns(xs []float64) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmtFigure(x)
	}
	return strings.Join(parts, " ")
}

// runChild runs one workload in this process: warm-up + timed runs (idle_bytes:
// exactly one sample, no warm-up).  Prints the per-run figures, one per line,
// on stdout for the parent.
func runChild(w *workload, runs int, budget time.Duration) {
	if w.name == "idle_bytes" { // a note line per child
		fmt.Println(w.run())
		printNotes(w)
		return
	}
	t0 := time.Now()
	w.run() // warm-up
	warm := time.Since(t0)
	// Keep the workload's total time near the budget: fewer timed runs (but
	// at least one) when a single run is slow.
	if warm > 0 {
		if fit := int(budget/warm) - 1; fit < runs {
			if fit < 1 {
				fit = 1
			}
			fmt.Fprintf(os.Stderr, "%s: warm-up took %v, doing %d timed runs instead of %d\n",
				w.name, warm.Round(time.Millisecond), fit, runs)
			runs = fit
		}
	}
	notes = nil // the warm-up's
	for i := 0; i < runs; i++ {
		runtime.GC()
		fmt.Println(w.run())
	}
	printNotes(w)
}

// printNotes: the "# go-note" line of the runs' notes, if any.
func printNotes(w *workload) {
	if len(notes) > 0 {
		fmt.Fprintf(os.Stderr, "# go-note %s procs=%d per run %s: %s\n", w.name,
			runtime.GOMAXPROCS(0), noteWhat[w.name], strings.Join(notes, " "))
	}
}

func runParent(w *workload, procs, runs int, budget time.Duration) (float64, error) {
	self, err := os.Executable()
	if err != nil {
		return 0, err
	}
	args := []string{"-child", "-procs", strconv.Itoa(procs), "-runs", strconv.Itoa(runs),
		"-budget", budget.String(), w.name}
	children := 1
	if w.name == "idle_bytes" {
		children = runs
	}
	var xs []float64
	for c := 0; c < children; c++ {
		cmd := exec.Command(self, args...)
		var out bytes.Buffer
		cmd.Stdout = &out
		cmd.Stderr = os.Stderr
		if err := cmd.Run(); err != nil {
			return 0, fmt.Errorf("%s: child failed: %v", w.name, err)
		}
		for _, line := range strings.Fields(out.String()) {
			x, err := strconv.ParseFloat(line, 64)
			if err != nil {
				return 0, fmt.Errorf("%s: bad child output %q", w.name, line)
			}
			xs = append(xs, x)
		}
	}
	if len(xs) == 0 {
		return 0, fmt.Errorf("%s: no samples", w.name)
	}
	fmt.Fprintf(os.Stderr, "# go %s procs=%d runs: %s\n", w.name, procs, fmtRuns(xs))
	return median(xs), nil
}

func main() {
	procs := flag.Int("procs", 1, "GOMAXPROCS")
	runs := flag.Int("runs", 5, "timed runs per workload (median is reported)")
	budget := flag.Duration("budget", 18*time.Second, "approximate time budget per workload")
	child := flag.Bool("child", false, "internal: run one workload in this process")
	flag.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: %s [-procs N] [-runs R] [-budget D] [workload...|all]\nworkloads:", os.Args[0])
		for _, w := range workloads {
			fmt.Fprintf(os.Stderr, " %s", w.name)
		}
		fmt.Fprintln(os.Stderr)
	}
	flag.Parse()
	if *procs < 1 || *runs < 1 {
		flag.Usage()
		os.Exit(2)
	}
	runtime.GOMAXPROCS(*procs)

	names := flag.Args()
	if len(names) == 0 || (len(names) == 1 && names[0] == "all") {
		names = nil
		for _, w := range workloads {
			names = append(names, w.name)
		}
	}
	var sel []*workload
	for _, n := range names {
		w := find(n)
		if w == nil {
			fmt.Fprintf(os.Stderr, "unknown workload %q\n", n)
			flag.Usage()
			os.Exit(2)
		}
		sel = append(sel, w)
	}

	if *child {
		if len(sel) != 1 {
			fmt.Fprintln(os.Stderr, "-child takes exactly one workload")
			os.Exit(2)
		}
		runChild(sel[0], *runs, *budget)
		return
	}

	failed := false
	for _, w := range sel {
		m, err := runParent(w, *procs, *runs, *budget)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			failed = true
			continue
		}
		fmt.Printf("%s,go,%d,%s\n", w.name, *procs, fmtFigure(m))
	}
	if failed {
		os.Exit(1)
	}
}
