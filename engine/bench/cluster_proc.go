package bench

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// The processes of a cluster run, and the proxy that cuts a slave off.

// freePort returns a loopback TCP port free at the time of asking.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// proc is a lidi process of a cluster run, its output in a log file.
type proc struct {
	cmd  *exec.Cmd
	done chan struct{}
	werr error
}

func startProc(argv []string, logPath string, onLine func(string)) (*proc, error) {
	log, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = log
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		log.Close()
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, fmt.Errorf("bench: starting %v: %w", argv, err)
	}
	c := &proc{cmd: cmd, done: make(chan struct{})}
	go func() {
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			fmt.Fprintln(log, sc.Text())
			onLine(sc.Text())
		}
		c.werr = cmd.Wait()
		log.Close()
		close(c.done)
	}()
	return c, nil
}

func (c *proc) exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

func (c *proc) signal(s os.Signal) {
	if !c.exited() {
		c.cmd.Process.Signal(s)
	}
}

// kill is kill -9.
func (c *proc) kill() {
	c.signal(syscall.SIGKILL)
	<-c.done
}

// stop asks the process to end (SIGTERM), and kills it after 15 s.
func (c *proc) stop() {
	c.signal(syscall.SIGTERM)
	select {
	case <-c.done:
	case <-time.After(15 * time.Second):
		c.kill()
	}
}

func (c *proc) err() error {
	<-c.done
	var ee *exec.ExitError
	if errors.As(c.werr, &ee) && ee.ExitCode() == -1 {
		return nil // killed by the bench
	}
	return c.werr
}

// cpu is the user and system time the ended process used.
func (c *proc) cpu() time.Duration {
	<-c.done
	if c.cmd.ProcessState == nil {
		return 0
	}
	return c.cmd.ProcessState.UserTime() + c.cmd.ProcessState.SystemTime()
}

// cutProxy forwards TCP connections to a target, and can cut them all and
// refuse new ones for a while: a network cut on loopback.
type cutProxy struct {
	l      net.Listener
	target string
	mu     sync.Mutex
	conns  map[net.Conn]bool
	until  time.Time
}

func newCutProxy(target string) (*cutProxy, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &cutProxy{l: l, target: target, conns: make(map[net.Conn]bool)}
	go p.serve()
	return p, nil
}

func (p *cutProxy) addr() string { return p.l.Addr().String() }

func (p *cutProxy) serve() {
	for {
		c, err := p.l.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		refused := time.Now().Before(p.until)
		p.mu.Unlock()
		if refused {
			c.Close()
			continue
		}
		go p.pipe(c)
	}
}

func (p *cutProxy) pipe(c net.Conn) {
	up, err := net.Dial("tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	p.conns[c], p.conns[up] = true, true
	p.mu.Unlock()
	go func() { io.Copy(up, c); up.Close() }()
	io.Copy(c, up)
	c.Close()
	p.mu.Lock()
	delete(p.conns, c)
	delete(p.conns, up)
	p.mu.Unlock()
}

// cut closes every connection and refuses new ones for d.
func (p *cutProxy) cut(d time.Duration) {
	p.mu.Lock()
	p.until = time.Now().Add(d)
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
}

func (p *cutProxy) close() { p.l.Close() }
