// Package warcexport writes a crawl as a web archive: WARC/1.1 files (ISO
// 28500), gzip-compressed record by record and rolled at a size limit,
// with a CDXJ index beside them in pywb's format, so that the archive
// tools researchers use (warcio, pywb, ReplayWeb.page, the Archives
// Unleashed Toolkit) read it.
//
// Every fetch of the crawl's history becomes a request record and a
// response record linked by WARC-Concurrent-To; a recrawl that found the
// page unchanged becomes a revisit record (server-not-modified for a 304,
// identical-payload-digest for a 200 with the same body) pointing at the
// capture it repeats; each page's outlinks and duplicate detection's
// decision are a metadata record beside its response, each URL the crawl
// did not fetch a metadata record saying why, each robots.txt a response
// record. The records are written by github.com/nlnwa/gowarc/v3, which
// computes and checks the block and payload digests (SHA-1, base32, as
// Heritrix writes them).
package warcexport

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/nlnwa/gowarc/v3"

	"lidi/engine/record"
	"lidi/storage"
)

// DefaultMaxSize is Options.MaxSize's default: files of about 1 GB, as
// the WARC standard recommends.
const DefaultMaxSize = 1_000_000_000

// IndexName is the name of the CDXJ index written beside the files.
const IndexName = "index.cdxj"

// Options says where and how to write. The zero value writes to the
// current directory, with the prefix "lidi", rolling files at
// DefaultMaxSize.
type Options struct {
	Dir     string // the directory of the files; it must exist
	Prefix  string // first part of the file names; default "lidi"
	MaxSize int64  // a file is closed, and the next begun, past about this many bytes; default DefaultMaxSize
	// Info are warcinfo fields added to lidi's (software, format, ...),
	// in order: the crawl's user agent and robots policy, say.
	Info [][2]string
	// Config, when not nil, is the crawl's configuration file, written
	// as a metadata record named ConfigName.
	Config     []byte
	ConfigName string
	// Progress, when set, is called after each URL's records are written.
	Progress func(Progress)
	// Now stamps the file names; nil means time.Now.
	Now func() time.Time
}

// Progress is how far an export has gone.
type Progress struct {
	Fetches, TotalFetches int64 // fetches exported, and in all
	Records               int64 // records written
	Bytes                 int64 // bytes written (compressed)
}

// Summary is what an export wrote, and what it could not.
type Summary struct {
	Files   []string         // the WARC files, in order
	Index   string           // the CDXJ index
	Records map[string]int64 // records written by WARC-Type
	Bytes   int64            // the files' total size
	Missing Missing
}

// Missing counts what the crawl did not keep, so the archive lacks it.
type Missing struct {
	// Headers: fetches recorded without their heads (storage.keep_headers
	// off, or a crawl by an older lidi); a metadata record stands in for
	// each response.
	Headers int64
	// Bodies: responses whose body was not kept (storage.keep_bodies
	// off, or replaced by a later fetch of the URL that changed it).
	Bodies int64
	// NoResponse: fetches that got no response at all (nothing to write).
	NoResponse int64
	// RobotsHeaders: robots.txt files kept without their heads, written as
	// resource records.
	RobotsHeaders int64
}

// Total is the number of captures with something missing.
func (m Missing) Total() int64 { return m.Headers + m.Bodies + m.NoResponse + m.RobotsHeaders }

// Export writes what src holds to opt.Dir.
func Export(ctx context.Context, src *storage.Captures, opt Options) (*Summary, error) {
	if opt.Prefix == "" {
		opt.Prefix = "lidi"
	}
	if opt.MaxSize <= 0 {
		opt.MaxSize = DefaultMaxSize
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if fi, err := os.Stat(opt.Dir); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("warcexport: %s is not a directory", opt.Dir)
	}
	total, _, err := src.Size(ctx)
	if err != nil {
		return nil, err
	}
	digest, err := fileDigest(ctx, src)
	if err != nil {
		return nil, err
	}
	x := &exporter{opt: opt, sum: &Summary{Records: map[string]int64{}}, total: total, digest: digest}
	x.open()
	werr := x.run(ctx, src)
	if err := x.close(); werr == nil {
		werr = err
	}
	if werr != nil {
		return x.sum, werr
	}
	x.sum.Index = filepath.Join(opt.Dir, IndexName)
	if err := writeIndex(x.sum.Index, x.cdx); err != nil {
		return x.sum, err
	}
	return x.sum, nil
}

// exporter holds an export's state. It is used by one goroutine.
type exporter struct {
	opt   Options
	sum   *Summary
	w     *gowarc.WarcFileWriter
	names *fileNames
	total int64
	done  int64 // fetches exported

	cdx  []string // index lines, sorted at the end
	file string   // the file written last
	// The previous record of file: its length is known once the next
	// one's offset (or the file's size) is.
	prevOffset int64
	prevEntry  *cdxEntry
	written    int64 // bytes of the files closed
	zlib       inflater
	digest     record.DigestKind // the crawl file's: its fetches' digests compare with the bodies'
}

// fileDigest returns the function of the crawl file's content digests,
// named in its meta table; a file that names none was written with
// record.DigestCRC64.
func fileDigest(ctx context.Context, src *storage.Captures) (record.DigestKind, error) {
	meta, err := src.Meta(ctx)
	if err != nil {
		return 0, err
	}
	name, ok := meta[record.MetaDigest]
	if !ok {
		return record.DigestCRC64, nil
	}
	k, err := record.ParseDigestKind(name)
	if err != nil {
		return 0, fmt.Errorf("warcexport: %w", err)
	}
	return k, nil
}

// recordOptions make records WARC/1.1 with SHA-1 digests in base32, and
// refuse a record that breaks the standard rather than write it.
var recordOptions = []gowarc.WarcRecordOption{
	gowarc.WithVersion(gowarc.V1_1),
	gowarc.WithDefaultDigestAlgorithm("sha1"),
	gowarc.WithDefaultDigestEncoding(gowarc.Base32),
	gowarc.WithAddMissingDigest(true),
	gowarc.WithSpecViolationPolicy(gowarc.ErrFail),
	gowarc.WithSyntaxErrorPolicy(gowarc.ErrFail),
}

func (x *exporter) open() {
	host, err := os.Hostname()
	if err != nil {
		host = "localhost"
	}
	x.names = &fileNames{dir: x.opt.Dir, prefix: x.opt.Prefix, host: host, now: x.opt.Now}
	x.w = gowarc.NewWarcFileWriter(
		gowarc.WithCompression(true),
		gowarc.WithMaxFileSize(x.opt.MaxSize),
		gowarc.WithFileNameGenerator(x.names),
		gowarc.WithRecordOptions(recordOptions...),
		gowarc.WithWarcInfoFunc(x.warcinfo),
	)
}

// warcinfo fills the record that begins every file.
func (x *exporter) warcinfo(rb gowarc.WarcRecordBuilder) error {
	fields := [][2]string{
		{"software", Software()},
		{"format", "WARC File Format 1.1"},
		{"conformsTo", "http://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/"},
		{"isPartOf", x.opt.Prefix},
		{"hostname", x.names.host},
		{"description", "lidi crawl exported with lidi export --warc"},
	}
	for _, f := range append(fields, x.opt.Info...) {
		if _, err := fmt.Fprintf(rb, "%s: %s\r\n", f[0], oneLine(f[1])); err != nil {
			return err
		}
	}
	return nil
}

// Software names lidi and its version as the build recorded it.
func Software() string {
	v := "(devel)"
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" {
			v = bi.Main.Version
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				v += " " + s.Value[:12]
			}
		}
	}
	return "lidi/" + v
}

// oneLine keeps a warc-fields value on its line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// fileNames names files as archival crawlers do (the WARC standard's
// annex C, Heritrix): prefix-timestamp-serial-host.warc.gz, the time the
// file was begun to the millisecond and a serial from 00000.
type fileNames struct {
	dir, prefix, host string
	serial            int
	now               func() time.Time
}

func (n *fileNames) NewWarcfileName() (string, string) {
	name := fmt.Sprintf("%s-%s-%05d-%s.warc", n.prefix, n.now().UTC().Format("20060102150405000"), n.serial, n.host)
	n.serial++
	return n.dir, name
}

func (x *exporter) close() error {
	if x.w == nil {
		return nil
	}
	err := x.w.Close()
	x.w = nil
	if ferr := x.finishFile(); err == nil {
		err = ferr
	}
	return err
}

// finishFile ends the index entries of the file written last, now closed.
func (x *exporter) finishFile() error {
	if x.file == "" {
		return nil
	}
	fi, err := os.Stat(filepath.Join(x.opt.Dir, x.file))
	if err != nil {
		return fmt.Errorf("warcexport: %w", err)
	}
	x.endPrev(fi.Size())
	x.written += fi.Size()
	x.sum.Bytes += fi.Size()
	x.sum.Files = append(x.sum.Files, filepath.Join(x.opt.Dir, x.file))
	x.file = ""
	return nil
}

func (x *exporter) endPrev(offset int64) {
	if x.prevEntry != nil {
		x.prevEntry.Length = itoa(offset - x.prevOffset)
		x.cdx = append(x.cdx, x.prevEntry.line())
		x.prevEntry = nil
	}
}

// built is a record ready to write and its index entry, nil when the
// record is not indexed (requests, warc-fields metadata: as pywb does).
type built struct {
	rec   gowarc.WarcRecord
	entry *cdxEntry
}

// write writes records in order, in one file.
func (x *exporter) write(recs ...built) error {
	rs := make([]gowarc.WarcRecord, len(recs))
	for i, b := range recs {
		rs[i] = b.rec
	}
	resp := x.w.Write(rs...)
	if resp == nil {
		return errors.New("warcexport: writer closed")
	}
	for i, r := range resp {
		if r.Err != nil {
			return fmt.Errorf("warcexport: %s: %w", r.FileName, r.Err)
		}
		if r.FileName != x.file {
			// The previous file was closed before this one began.
			if err := x.finishFile(); err != nil {
				return err
			}
			x.file = r.FileName
		}
		x.endPrev(r.FileOffset)
		x.prevOffset = r.FileOffset
		if e := recs[i].entry; e != nil {
			e.Offset, e.Filename = itoa(r.FileOffset), r.FileName
			x.prevEntry = e
		}
		x.sum.Records[recs[i].rec.Type().String()]++
	}
	return nil
}

// recordID is a record's WARC-Record-ID, derived from what it records so
// that exporting the same crawl twice gives the same ids.
func recordID(parts ...string) string {
	return "<" + uuid.NewSHA1(idSpace, []byte(strings.Join(parts, "\x00"))).URN() + ">"
}

var idSpace = uuid.MustParse("6c696469-7761-7263-8000-000000000000")

// warcDate is a WARC-Date to the millisecond (WARC/1.1 allows fractions).
func warcDate(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// fields are a record's usual WARC fields: its id (from kind, uri and
// date), date, target URI, content type and, when known, the address
// the capture came from.
func fields(kind, uri, date, contentType, ip string) [][2]string {
	fs := [][2]string{
		{gowarc.WarcRecordID, recordID(kind, uri, date)},
		{gowarc.WarcDate, date},
		{gowarc.WarcTargetURI, uri},
		{gowarc.ContentType, contentType},
	}
	if ip != "" {
		fs = append(fs, [2]string{gowarc.WarcIPAddress, ip})
	}
	return fs
}

// build makes a record of type t with the fields given and block.
func build(t gowarc.RecordType, fields [][2]string, block []byte) (gowarc.WarcRecord, error) {
	rb := gowarc.NewRecordBuilder(t, recordOptions...)
	for _, f := range fields {
		rb.AddWarcHeader(f[0], f[1])
	}
	if _, err := rb.Write(block); err != nil {
		rb.Close()
		return nil, err
	}
	rec, _, err := rb.Build()
	if err != nil {
		return nil, fmt.Errorf("warcexport: %s record: %w", t, err)
	}
	return rec, nil
}

// capture is a response (or revisit) record written for a URL: what a
// later revisit refers to.
type capture struct {
	id, date, payloadDigest string
}

func (x *exporter) run(ctx context.Context, src *storage.Captures) error {
	if x.opt.Config != nil {
		rec, err := build(gowarc.Metadata, [][2]string{
			{gowarc.WarcRecordID, recordID("config", x.opt.ConfigName)},
			{gowarc.WarcDate, warcDate(x.opt.Now())},
			{gowarc.WarcTargetURI, "metadata://lidi/" + filepath.Base(x.opt.ConfigName)},
			{gowarc.ContentType, "application/yaml"},
		}, x.opt.Config)
		if err != nil {
			return err
		}
		if err := x.write(built{rec: rec}); err != nil {
			return err
		}
	}
	if err := src.Robots(ctx, x.robots); err != nil {
		return err
	}
	if err := src.URLs(ctx, func(u *storage.CapturedURL) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := x.url(u); err != nil {
			return fmt.Errorf("%s: %w", u.URL, err)
		}
		x.done += int64(len(u.Fetches))
		x.progress()
		return nil
	}); err != nil {
		return err
	}
	return src.Skipped(ctx, x.skipped)
}

func (x *exporter) progress() {
	if x.opt.Progress == nil {
		return
	}
	var n int64
	for _, c := range x.sum.Records {
		n += c
	}
	x.opt.Progress(Progress{Fetches: x.done, TotalFetches: x.total, Records: n, Bytes: x.written + x.prevOffset})
}

// url writes every fetch of a URL.
func (x *exporter) url(u *storage.CapturedURL) error {
	body, err := x.zlib.inflate(u.Body)
	if err != nil {
		return fmt.Errorf("body: %w", err)
	}
	var bodyDigest uint64
	if len(body) > 0 {
		bodyDigest = x.digest.Sum(body)
	}
	var (
		last     *capture                // the latest response written
		byDigest = map[uint64]*capture{} // responses written, by content digest
	)
	for i := range u.Fetches {
		f := &u.Fetches[i]
		if f.Status == 0 {
			x.sum.Missing.NoResponse++
			continue
		}
		date := warcDate(f.Time)
		var req, head []byte
		if f.Wire != nil {
			w, err := x.zlib.inflate(f.Wire)
			if err == nil {
				req, head, err = splitWire(w)
			}
			if err != nil {
				return fmt.Errorf("heads of the fetch at %s: %w", date, err)
			}
		}
		var main built
		switch {
		case head == nil:
			x.sum.Missing.Headers++
			if main, err = x.standIn(u.URL, f, "response headers not kept"); err != nil {
				return err
			}
		case f.Status == 304 && last != nil:
			main, err = x.revisit(u.URL, f, head, gowarc.ProfileServerNotModifiedV1_1, last)
		case f.Digest != 0 && byDigest[f.Digest] != nil:
			// Replay joins this head to the payload of the record it
			// refers to, which is stored decoded: the head must frame
			// that payload as a response record's does.
			main, err = x.revisit(u.URL, f, payloadHead(head, req, int(f.Length)), gowarc.ProfileIdenticalPayloadDigestV1_1, byDigest[f.Digest])
		case f.Status == 304:
			// A 304 whose original capture is not in the archive: it
			// still says when the server confirmed the copy.
			main, err = x.response(u.URL, f, req, head, nil, false)
		case f.Digest == 0 && f.Length == 0:
			main, err = x.response(u.URL, f, req, head, nil, false)
		case f.Digest == bodyDigest:
			main, err = x.response(u.URL, f, req, head, body, u.Truncated) // the copy kept, and its flag
		default:
			x.sum.Missing.Bodies++
			main, err = x.standIn(u.URL, f, "body not kept")
		}
		if err != nil {
			return err
		}
		// Read before the writer closes the record.
		mainID := main.rec.WarcHeader().Get(gowarc.WarcRecordID)
		mainType := main.rec.Type()
		payload := main.rec.WarcHeader().Get(gowarc.WarcPayloadDigest)
		recs := []built{main}
		if req != nil {
			r, err := request(u.URL, date, mainID, req)
			if err != nil {
				return err
			}
			recs = append(recs, r)
		}
		if i == len(u.Fetches)-1 {
			if meta, ok, err := x.pageMetadata(u, date, mainID); err != nil {
				return err
			} else if ok {
				recs = append(recs, meta)
			}
		}
		if err := x.write(recs...); err != nil {
			return err
		}
		if mainType == gowarc.Response && payload != "" {
			c := &capture{id: mainID, date: date, payloadDigest: payload}
			last = c
			if f.Digest != 0 {
				byDigest[f.Digest] = c
			}
		}
	}
	return nil
}

// request builds the request record of a fetch. Like Heritrix, the
// records that go with a response (request, metadata) name it in
// WARC-Concurrent-To.
func request(uri, date, response string, req []byte) (built, error) {
	fs := append(fields("request", uri, date, "application/http;msgtype=request", ""), [2]string{gowarc.WarcConcurrentTo, response})
	r, err := build(gowarc.Request, fs, req)
	return built{rec: r}, err
}

// response builds the response record of a fetch: its head (see
// payloadHead) and body.
func (x *exporter) response(uri string, f *storage.Capture, req, head, body []byte, truncated bool) (built, error) {
	date := warcDate(f.Time)
	block := append(payloadHead(head, req, len(body)), body...)
	fs := fields("response", uri, date, "application/http;msgtype=response", f.IP)
	if truncated {
		fs = append(fs, [2]string{gowarc.WarcTruncated, "length"})
	}
	rec, err := build(gowarc.Response, fs, block)
	if err != nil {
		return built{}, err
	}
	return built{rec: rec, entry: &cdxEntry{key: SURT(uri), timestamp: timestamp14(f.Time), URL: uri,
		Mime: cdxMime("response", field(head, "Content-Type")), Status: itoa(int64(status(head))),
		Digest: strings.TrimPrefix(rec.WarcHeader().Get(gowarc.WarcPayloadDigest), "sha1:")}}, nil
}

// revisit builds a revisit record: the fetch's response head (for an
// identical payload, as payloadHead gives it), pointing at the capture of
// the content it repeats. A 304's head is kept as received: it frames no
// payload of its own.
func (x *exporter) revisit(uri string, f *storage.Capture, head []byte, profile string, of *capture) (built, error) {
	date := warcDate(f.Time)
	fs := append(fields("revisit", uri, date, "application/http;msgtype=response", f.IP),
		[2]string{gowarc.WarcProfile, profile},
		[2]string{gowarc.WarcRefersTo, of.id},
		[2]string{gowarc.WarcRefersToTargetURI, uri},
		[2]string{gowarc.WarcRefersToDate, of.date},
		[2]string{gowarc.WarcPayloadDigest, of.payloadDigest})
	rec, err := build(gowarc.Revisit, fs, head)
	if err != nil {
		return built{}, err
	}
	return built{rec: rec, entry: &cdxEntry{key: SURT(uri), timestamp: timestamp14(f.Time), URL: uri,
		Mime: "warc/revisit", Status: itoa(int64(status(head))), Digest: strings.TrimPrefix(of.payloadDigest, "sha1:")}}, nil
}

// standIn is the metadata record written in place of a response the
// crawl did not keep whole.
func (x *exporter) standIn(uri string, f *storage.Capture, why string) (built, error) {
	date := warcDate(f.Time)
	var b strings.Builder
	fmt.Fprintf(&b, "missing: %s\r\nhttp-status: %d\r\nlength: %d\r\n", why, f.Status, f.Length)
	if f.Verdict != "" && f.Verdict != "none" {
		fmt.Fprintf(&b, "recrawl-verdict: %s\r\n", f.Verdict)
	}
	if f.Err != "" {
		fmt.Fprintf(&b, "fetch-error: %s\r\n", oneLine(f.Err))
	}
	fs := fields("stand-in", uri, date, gowarc.ApplicationWarcFields, f.IP)
	rec, err := build(gowarc.Metadata, fs, []byte(b.String()))
	return built{rec: rec}, err
}

// pageMetadata is the metadata record of a page: its outlinks and
// duplicate detection's decision; ok is false when there is neither.
func (x *exporter) pageMetadata(u *storage.CapturedURL, date, concurrent string) (built, bool, error) {
	if len(u.Links) == 0 && u.Dup == nil {
		return built{}, false, nil
	}
	var b strings.Builder
	for _, l := range u.Links {
		fmt.Fprintf(&b, "outlink: %s\r\n", l)
	}
	if d := u.Dup; d != nil {
		fmt.Fprintf(&b, "duplicate-of: %s\r\nduplicate-kind: %s\r\nduplicate-test: %s\r\n", d.Of, d.Kind, d.Test)
		if d.Similarity > 0 {
			fmt.Fprintf(&b, "duplicate-similarity: %.3f\r\n", d.Similarity)
		}
	}
	fs := append(fields("metadata", u.URL, date, gowarc.ApplicationWarcFields, ""), [2]string{gowarc.WarcConcurrentTo, concurrent})
	rec, err := build(gowarc.Metadata, fs, []byte(b.String()))
	return built{rec: rec}, err == nil, err
}

// skipped writes why a URL found is not in the archive.
func (x *exporter) skipped(s storage.SkippedURL) error {
	var b strings.Builder
	fmt.Fprintf(&b, "not-fetched: %s\r\n", s.Reason)
	if s.Rule != "" {
		fmt.Fprintf(&b, "rule: %s\r\n", oneLine(s.Rule))
		for _, e := range s.Evidence {
			fmt.Fprintf(&b, "rule-evidence: %s duplicates %s\r\n", e[0], e[1])
		}
	}
	date := warcDate(s.Discovered)
	rec, err := build(gowarc.Metadata, fields("skipped", s.URL, date, gowarc.ApplicationWarcFields, ""), []byte(b.String()))
	if err != nil {
		return err
	}
	return x.write(built{rec: rec})
}

// robots writes a site's robots.txt as fetched.
func (x *exporter) robots(r storage.RobotsCapture) error {
	uri := r.Site + "/robots.txt"
	date := warcDate(r.Fetched)
	switch {
	case r.Status < 0:
		rec, err := build(gowarc.Metadata, fields("robots", uri, date, gowarc.ApplicationWarcFields, ""), []byte("robots-status: unreachable\r\n"))
		if err != nil {
			return err
		}
		return x.write(built{rec: rec})
	case r.Wire == nil:
		x.sum.Missing.RobotsHeaders++
		fs := fields("robots", uri, date, "text/plain", r.IP)
		rec, err := build(gowarc.Resource, fs, r.Body)
		if err != nil {
			return err
		}
		return x.write(built{rec: rec, entry: &cdxEntry{key: SURT(uri), timestamp: timestamp14(r.Fetched), URL: uri, Mime: "text/plain",
			Digest: strings.TrimPrefix(rec.WarcHeader().Get(gowarc.WarcPayloadDigest), "sha1:")}})
	}
	w, err := x.zlib.inflate(r.Wire)
	if err != nil {
		return fmt.Errorf("%s: %w", uri, err)
	}
	req, head, err := splitWire(w)
	if err != nil {
		return fmt.Errorf("%s: %w", uri, err)
	}
	f := &storage.Capture{Time: r.Fetched, Status: r.Status, IP: r.IP}
	resp, err := x.response(uri, f, req, head, r.Body, false)
	if err != nil {
		return err
	}
	rq, err := request(uri, date, resp.rec.WarcHeader().Get(gowarc.WarcRecordID), req)
	if err != nil {
		return err
	}
	return x.write(resp, rq)
}

// writeIndex writes the CDXJ lines sorted, as pywb looks them up.
func writeIndex(path string, lines []string) error {
	slices.Sort(lines)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(strings.Join(lines, "")), 0o644); err != nil {
		return fmt.Errorf("warcexport: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("warcexport: %w", err)
	}
	return nil
}
