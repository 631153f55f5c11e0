package sim

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/heureka-project/heureka/hdfs"
	"github.com/heureka-project/heureka/webhdfs"
)

// This file is the simulator's minimal WebHDFS surface (SIMULATED, not
// Hadoop). The shapes follow Hadoop's WebHDFS REST API documentation
// (hadoop-hdfs/src/site/markdown/WebHDFS.md) and its server code
// (NamenodeWebHdfsMethods, ExceptionHandler); docs/design.md cites them.
//
// A simulated NameNode answers GETFILESTATUS, LISTSTATUS, MKDIRS and DELETE
// itself and redirects CREATE, APPEND and OPEN (307) to one of the
// simulated DataNodes it was given, leaving out those named in
// excludedatanodes. Like a real NameNode it does not know that a DataNode
// has just died: it redirects to it all the same, until told to exclude
// it. While it is not active it answers every operation with a
// StandbyException (403). A simulated DataNode stores and serves the bytes.
//
// Storage: every simulated daemon of one cluster is given the same
// directory (WebHDFSConfig.Dir); files live under it as plain files. That
// one directory stands for both the namespace a real cluster shares between
// its NameNodes (the shared edits) and the block replicas its DataNodes
// hold: a file written through one DataNode can be read through another,
// as if replicated. Each DataNode counts the writes it received.

// WebHDFSConfig turns on a simulated daemon's WebHDFS surface.
type WebHDFSConfig struct {
	// Dir is the simulated cluster's storage, the same for each of its
	// daemons; "" turns WebHDFS off.
	Dir string
	// DataNodes are the DataNodes a NameNode redirects to.
	DataNodes []DataNodeAddr
	// MaxBody bounds the bytes one CREATE or APPEND may send to a
	// DataNode; 0 means DefaultMaxWebHDFSBody.
	MaxBody int64
}

// DataNodeAddr is where a simulated NameNode finds one of its DataNodes.
type DataNodeAddr struct {
	HTTP string // host:port of its web server (/webhdfs/v1)
	Xfer string // host:port of its data-transfer port, the key excludedatanodes uses
}

// ParseDataNodeAddr reads "HTTP_ADDR=XFER_ADDR", e.g.
// "127.0.0.1:9864=127.0.0.1:9866".
func ParseDataNodeAddr(s string) (DataNodeAddr, error) {
	h, x, ok := strings.Cut(s, "=")
	if !ok {
		return DataNodeAddr{}, fmt.Errorf("datanode %q: want HTTP_HOST:PORT=XFER_HOST:PORT", s)
	}
	for _, a := range []string{h, x} {
		if _, p, err := net.SplitHostPort(a); err != nil || p == "" || p == "0" {
			return DataNodeAddr{}, fmt.Errorf("datanode %q: %q is not HOST:PORT", s, a)
		}
	}
	return DataNodeAddr{HTTP: h, Xfer: x}, nil
}

// DefaultMaxWebHDFSBody bounds a simulated write: enough for tests, small
// enough that a runaway client cannot fill the disk.
const DefaultMaxWebHDFSBody = 64 << 20

const webhdfsPrefix = "/webhdfs/v1"

// remoteError is one WebHDFS error answer, written in the shape of
// Hadoop's ExceptionHandler by webhdfs.WriteRemoteException.
type remoteError struct {
	status    int
	javaClass string
	message   string
}

func (e *remoteError) Error() string { return e.javaClass + ": " + e.message }

func illegalArgument(format string, a ...any) *remoteError {
	return &remoteError{http.StatusBadRequest, "java.lang.IllegalArgumentException", fmt.Sprintf(format, a...)}
}

func notFound(p string) *remoteError {
	return &remoteError{http.StatusNotFound, "java.io.FileNotFoundException", "File does not exist: " + p}
}

func ioException(status int, class, format string, a ...any) *remoteError {
	return &remoteError{status, class, fmt.Sprintf(format, a...)}
}

func writeRemote(w http.ResponseWriter, e *remoteError) {
	webhdfs.WriteRemoteException(w, e.status, e.javaClass, e.message)
}

func writeJSONBody(w http.ResponseWriter, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}

// The Hadoop enum that parses each method's op parameter.
var opEnums = map[string]string{
	http.MethodGet: "GetOpParam", http.MethodPut: "PutOpParam", http.MethodPost: "PostOpParam", http.MethodDelete: "DeleteOpParam",
}

// webhdfsRequest is a parsed request: its op (upper case), its path in
// the namespace ("/a/b") and its query.
type webhdfsRequest struct {
	op   string
	path string
	q    url.Values
}

func parseWebHDFS(r *http.Request) (*webhdfsRequest, *remoteError) {
	p := strings.TrimPrefix(r.URL.Path, webhdfsPrefix)
	if p == "" {
		p = "/"
	}
	if !strings.HasPrefix(p, "/") {
		return nil, illegalArgument("Invalid path name %s", p)
	}
	for part := range strings.SplitSeq(p, "/") {
		// DFSUtil.isValidName: no "." or ".." components, no ':'.
		if part == "." || part == ".." || strings.Contains(part, ":") {
			return nil, ioException(http.StatusBadRequest, "org.apache.hadoop.fs.InvalidPathException", "Invalid path name %s", p)
		}
	}
	if len(p) > 1 {
		p = strings.TrimRight(p, "/")
	}
	q := r.URL.Query()
	raw := q.Get("op")
	enum, ok := opEnums[r.Method]
	if !ok {
		return nil, ioException(http.StatusMethodNotAllowed, "java.lang.UnsupportedOperationException", "HTTP method %s is not supported", r.Method)
	}
	if raw == "" {
		// Hadoop's default op is NULL, which every handler rejects.
		return nil, illegalArgument("Invalid value for webhdfs parameter \"op\": op is missing")
	}
	op := strings.ToUpper(raw) // EnumParam parses case-insensitively
	if m, known := webhdfs.OpMethod(op); !known || m != r.Method {
		return nil, illegalArgument("Invalid value for webhdfs parameter \"op\": No enum constant org.apache.hadoop.hdfs.web.resources.%s.Op.%s", enum, op)
	}
	return &webhdfsRequest{op: op, path: p, q: q}, nil
}

// root opens the shared storage.
func (s *Sim) root() (*os.Root, error) {
	dir := filepath.Join(s.cfg.WebHDFS.Dir, "fs")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return os.OpenRoot(dir)
}

// rel is p as a name inside the storage root.
func rel(p string) string {
	r := strings.TrimPrefix(path.Clean(p), "/")
	if r == "" {
		return "."
	}
	return r
}

func (s *Sim) serveWebHDFS(w http.ResponseWriter, r *http.Request) {
	if s.cfg.WebHDFS.Dir == "" {
		writeRemote(w, ioException(http.StatusNotFound, "java.lang.UnsupportedOperationException", "this simulated daemon was started without WebHDFS (give --webhdfs-dir)"))
		return
	}
	// Which simulated daemon answered, for tests and benchmarks.
	w.Header().Set("X-Heureka-Simulator-Hostname", s.cfg.Hostname)
	req, rerr := parseWebHDFS(r)
	if rerr != nil {
		writeRemote(w, rerr)
		return
	}
	root, err := s.root()
	if err != nil {
		writeRemote(w, ioException(http.StatusInternalServerError, "java.io.IOException", "simulator storage: %v", err))
		return
	}
	defer root.Close()
	if s.cfg.Role == hdfs.RoleNameNode {
		rerr = s.nameNodeOp(w, r, req, root)
	} else {
		rerr = s.dataNodeOp(w, r, req, root)
	}
	if rerr != nil {
		writeRemote(w, rerr)
	}
}

// nameNodeOp answers one request as a NameNode.
func (s *Sim) nameNodeOp(w http.ResponseWriter, r *http.Request, req *webhdfsRequest, root *os.Root) *remoteError {
	s.mu.Lock()
	ha := s.st.ha
	s.mu.Unlock()
	if ha != hdfs.HAActive {
		category := "WRITE"
		if r.Method == http.MethodGet {
			category = "READ"
		}
		return ioException(http.StatusForbidden, "org.apache.hadoop.ipc.StandbyException",
			"Operation category %s is not supported in state %s. Visit https://s.apache.org/sbnn-error", category, ha)
	}
	switch req.op {
	case "GETFILESTATUS":
		fi, err := root.Lstat(rel(req.path))
		if err != nil {
			return notFound(req.path)
		}
		writeJSONBody(w, map[string]any{"FileStatus": fileStatus(fi, "", root, rel(req.path))})
		return nil
	case "LISTSTATUS":
		fi, err := root.Lstat(rel(req.path))
		if err != nil {
			return notFound(req.path)
		}
		list := []fileStatusJSON{}
		if !fi.IsDir() {
			list = append(list, fileStatus(fi, "", root, rel(req.path)))
		} else {
			d, err := root.Open(rel(req.path))
			if err != nil {
				return notFound(req.path)
			}
			names, _ := d.Readdirnames(-1)
			d.Close()
			sort.Strings(names)
			for _, n := range names {
				if strings.HasPrefix(n, ".heureka-tmp-") {
					continue
				}
				child := path.Join(rel(req.path), n)
				if cfi, err := root.Lstat(child); err == nil {
					list = append(list, fileStatus(cfi, n, root, child))
				}
			}
		}
		writeJSONBody(w, map[string]any{"FileStatuses": map[string]any{"FileStatus": list}})
		return nil
	case "MKDIRS":
		perm, rerr := permission(req.q, 0o755)
		if rerr != nil {
			return rerr
		}
		if fi, err := root.Stat(rel(req.path)); err == nil && !fi.IsDir() {
			return ioException(http.StatusForbidden, "org.apache.hadoop.fs.FileAlreadyExistsException", "Path is not a directory: %s", req.path)
		}
		if err := root.MkdirAll(rel(req.path), perm); err != nil {
			return ioException(http.StatusForbidden, "org.apache.hadoop.fs.ParentNotDirectoryException", "%s: %v", req.path, err)
		}
		writeJSONBody(w, map[string]bool{"boolean": true})
		return nil
	case "DELETE":
		recursive := strings.EqualFold(req.q.Get("recursive"), "true")
		if req.path == "/" {
			writeJSONBody(w, map[string]bool{"boolean": false})
			return nil
		}
		fi, err := root.Lstat(rel(req.path))
		if err != nil {
			writeJSONBody(w, map[string]bool{"boolean": false})
			return nil
		}
		if fi.IsDir() && !recursive {
			if err := root.Remove(rel(req.path)); err != nil {
				return ioException(http.StatusForbidden, "org.apache.hadoop.fs.PathIsNotEmptyDirectoryException", "`%s is non empty': Directory is not empty", req.path)
			}
		} else if err := root.RemoveAll(rel(req.path)); err != nil {
			return ioException(http.StatusForbidden, "java.io.IOException", "delete %s: %v", req.path, err)
		}
		writeJSONBody(w, map[string]bool{"boolean": true})
		return nil
	case "CREATE", "APPEND", "OPEN":
		return s.redirect(w, r, req, root)
	}
	return ioException(http.StatusBadRequest, "java.lang.UnsupportedOperationException", "%s is not supported by heureka's NameNode simulator", req.op)
}

// redirect answers CREATE, APPEND and OPEN with a 307 to a DataNode, as
// NamenodeWebHdfsMethods.redirectURI does.
func (s *Sim) redirect(w http.ResponseWriter, r *http.Request, req *webhdfsRequest, root *os.Root) *remoteError {
	if req.op != "CREATE" {
		fi, err := root.Stat(rel(req.path))
		if err != nil || fi.IsDir() {
			return notFound(req.path)
		}
	}
	excluded := map[string]bool{}
	for e := range strings.SplitSeq(req.q.Get("excludedatanodes"), ",") {
		if e = strings.TrimSpace(e); e != "" {
			excluded[e] = true
		}
	}
	var pool []DataNodeAddr
	for _, dn := range s.cfg.WebHDFS.DataNodes {
		host, _, _ := net.SplitHostPort(dn.Xfer)
		// "ip:xferPort" finds one DataNode (getDatanodeByXferAddr); a
		// bare address finds the DataNode on that host (getDatanodeByHost).
		if !excluded[dn.Xfer] && !excluded[host] {
			pool = append(pool, dn)
		}
	}
	if len(pool) == 0 {
		return ioException(http.StatusForbidden, "java.io.IOException", "Failed to find datanode, suggest to check cluster health. excludeDatanodes=%s", req.q.Get("excludedatanodes"))
	}
	dn := pool[rand.IntN(len(pool))]
	q := url.Values{}
	q.Set("op", req.op)
	for _, k := range []string{"user.name", "doas", "delegation", "overwrite", "permission", "replication", "blocksize", "buffersize", "offset", "length"} {
		if v, ok := req.q[k]; ok {
			q[k] = v
		}
	}
	q.Set("namenoderpcaddress", s.PortAddr())
	if req.op == "CREATE" {
		q.Set("createparent", "true")
		if !q.Has("overwrite") {
			q.Set("overwrite", "false")
		}
	}
	loc := url.URL{Scheme: "http", Host: dn.HTTP, Path: webhdfsPrefix + req.path, RawQuery: q.Encode()}
	w.Header().Set("Location", loc.String())
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", "0")
	w.WriteHeader(http.StatusTemporaryRedirect)
	return nil
}

// dataNodeOp answers one request as a DataNode (the second step of
// CREATE, APPEND and OPEN).
func (s *Sim) dataNodeOp(w http.ResponseWriter, r *http.Request, req *webhdfsRequest, root *os.Root) *remoteError {
	if req.op != "CREATE" && req.op != "APPEND" && req.op != "OPEN" {
		return ioException(http.StatusBadRequest, "java.lang.UnsupportedOperationException", "%s is not supported by a DataNode; send it to the NameNode", req.op)
	}
	nn := req.q.Get("namenoderpcaddress")
	if nn == "" {
		return illegalArgument("namenoderpcaddress is not specified.")
	}
	name := rel(req.path)
	limit := s.cfg.WebHDFS.MaxBody
	if limit <= 0 {
		limit = DefaultMaxWebHDFSBody
	}
	switch req.op {
	case "OPEN":
		f, err := root.Open(name)
		if err != nil {
			return notFound(req.path)
		}
		defer f.Close()
		fi, err := f.Stat()
		if err != nil || fi.IsDir() {
			return notFound(req.path)
		}
		off, _ := strconv.ParseInt(req.q.Get("offset"), 10, 64)
		if off < 0 || (off > 0 && off >= fi.Size()) {
			return ioException(http.StatusForbidden, "java.io.IOException", "Offset=%d out of the range [0, %d); OPEN, path=%s", off, fi.Size(), req.path)
		}
		n := fi.Size() - off
		if l, err := strconv.ParseInt(req.q.Get("length"), 10, 64); err == nil && l >= 0 && l < n {
			n = l
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Length", strconv.FormatInt(n, 10))
		_, _ = io.Copy(w, io.NewSectionReader(f, off, n))
		return nil
	case "CREATE":
		perm, rerr := permission(req.q, 0o644)
		if rerr != nil {
			return rerr
		}
		overwrite := strings.EqualFold(req.q.Get("overwrite"), "true")
		if fi, err := root.Stat(name); err == nil {
			if fi.IsDir() || !overwrite {
				return ioException(http.StatusForbidden, "org.apache.hadoop.fs.FileAlreadyExistsException", "%s for client %s already exists", req.path, clientHost(r))
			}
		}
		if dir := path.Dir(name); dir != "." {
			if err := root.MkdirAll(dir, 0o755); err != nil {
				return ioException(http.StatusForbidden, "org.apache.hadoop.fs.ParentNotDirectoryException", "%s: %v", req.path, err)
			}
		}
		tmp := path.Join(path.Dir(name), fmt.Sprintf(".heureka-tmp-%d", rand.Uint64()))
		f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if err != nil {
			return ioException(http.StatusForbidden, "java.io.IOException", "create %s: %v", req.path, err)
		}
		n, err := io.Copy(f, io.LimitReader(r.Body, limit+1))
		cerr := f.Close()
		if err == nil && n > limit {
			err = fmt.Errorf("more than %d bytes (the simulator's bound)", limit)
		}
		if err == nil {
			err = cerr
		}
		if err == nil {
			err = root.Rename(tmp, name)
		}
		if err != nil {
			_ = root.Remove(tmp)
			return ioException(http.StatusForbidden, "java.io.IOException", "write %s: %v", req.path, err)
		}
		s.recordWrite(req.path)
		w.Header().Set("Location", "webhdfs://"+nn+req.path)
		w.Header().Set("Content-Length", "0")
		w.WriteHeader(http.StatusCreated)
		return nil
	default: // APPEND
		f, err := root.OpenFile(name, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return notFound(req.path)
			}
			return ioException(http.StatusForbidden, "java.io.IOException", "append %s: %v", req.path, err)
		}
		n, err := io.Copy(f, io.LimitReader(r.Body, limit))
		cerr := f.Close()
		if err == nil {
			err = cerr
		}
		if err == nil && n == limit {
			// Probe for more than the bound; what was sent stays appended.
			if k, _ := r.Body.Read(make([]byte, 1)); k > 0 {
				err = fmt.Errorf("more than %d bytes (the simulator's bound)", limit)
			}
		}
		if err != nil {
			return ioException(http.StatusForbidden, "java.io.IOException", "append %s: %v", req.path, err)
		}
		s.recordWrite(req.path)
		w.Header().Set("Content-Length", "0")
		w.WriteHeader(http.StatusOK)
		return nil
	}
}

// maxRecentWrites bounds the list of paths a DataNode reports.
const maxRecentWrites = 1024

func (s *Sim) recordWrite(p string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.writes++
	s.recent = append(s.recent, p)
	if len(s.recent) > maxRecentWrites {
		s.recent = s.recent[len(s.recent)-maxRecentWrites:]
	}
}

func clientHost(r *http.Request) string {
	h, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return h
}

// permission reads the permission parameter (octal, as PermissionParam:
// up to 1777), or def.
func permission(q url.Values, def os.FileMode) (os.FileMode, *remoteError) {
	v := q.Get("permission")
	if v == "" {
		return def, nil
	}
	n, err := strconv.ParseUint(v, 8, 16)
	if err != nil || n > 0o1777 {
		return 0, illegalArgument("Invalid value for webhdfs parameter \"permission\": Invalid value: \"%s\" does not belong to the domain ^[0-1]?[0-7]?[0-7][0-7]$", v)
	}
	return os.FileMode(n) & os.ModePerm, nil
}

// fileStatusJSON is a FileStatus object (WebHDFS.md, "FileStatus JSON
// Schema"), fields in the order Hadoop's JsonUtil writes them.
type fileStatusJSON struct {
	AccessTime       int64  `json:"accessTime"`
	BlockSize        int64  `json:"blockSize"`
	ChildrenNum      int    `json:"childrenNum"`
	FileID           uint64 `json:"fileId"`
	Group            string `json:"group"`
	Length           int64  `json:"length"`
	ModificationTime int64  `json:"modificationTime"`
	Owner            string `json:"owner"`
	PathSuffix       string `json:"pathSuffix"`
	Permission       string `json:"permission"`
	Replication      int    `json:"replication"`
	StoragePolicy    int    `json:"storagePolicy"`
	Type             string `json:"type"`
}

func fileStatus(fi os.FileInfo, suffix string, root *os.Root, name string) fileStatusJSON {
	st := fileStatusJSON{
		ModificationTime: fi.ModTime().UnixMilli(),
		Group:            "supergroup",
		Owner:            "hdfs",
		PathSuffix:       suffix,
		Permission:       strconv.FormatUint(uint64(fi.Mode().Perm()), 8),
		Type:             "FILE",
	}
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
		st.FileID = sys.Ino
	}
	if fi.IsDir() {
		st.Type = "DIRECTORY"
		if d, err := root.Open(name); err == nil {
			names, _ := d.Readdirnames(-1)
			d.Close()
			st.ChildrenNum = len(names)
		}
		return st
	}
	st.AccessTime = st.ModificationTime
	st.BlockSize = 128 << 20
	st.Length = fi.Size()
	st.Replication = 3
	return st
}

// webhdfsState is what State reports of a DataNode's WebHDFS writes.
func (s *Sim) webhdfsStateLocked(st *State) {
	if s.cfg.WebHDFS.Dir == "" {
		return
	}
	st.WebHDFS = &WebHDFSState{Writes: s.writes, Recent: append([]string{}, s.recent...)}
	if s.cfg.Role == hdfs.RoleNameNode {
		st.WebHDFS.Recent = nil
		for _, dn := range s.cfg.WebHDFS.DataNodes {
			st.WebHDFS.DataNodes = append(st.WebHDFS.DataNodes, dn.HTTP+"="+dn.Xfer)
		}
	}
}

// WebHDFSState is a simulated daemon's WebHDFS view in State.
type WebHDFSState struct {
	// Writes counts the CREATE and APPEND bodies a DataNode stored, and
	// Recent names their paths, the latest last (at most 1024).
	Writes int64    `json:"writes"`
	Recent []string `json:"recent,omitempty"`
	// DataNodes are a NameNode's, as HTTP=XFER.
	DataNodes []string `json:"datanodes,omitempty"`
}
