package webhdfs

import "net/http"

// opSpec is what the gateway knows of one WebHDFS operation.
type opSpec struct {
	method string
	// required parameters, without which the NameNode cannot act.
	required []string
	// redirects: the NameNode answers with a 307 to a DataNode.
	redirects bool
	// write: the redirect carries new file data (CREATE, APPEND).
	write bool
}

// operations are the WebHDFS operations of Hadoop 3.4's WebHDFS.md, by
// HTTP method, with the parameters each cannot do without.
var operations = map[string]opSpec{}

func init() {
	add := func(method string, names ...string) {
		for _, n := range names {
			operations[n] = opSpec{method: method}
		}
	}
	add(http.MethodGet, "OPEN", "GETFILESTATUS", "LISTSTATUS", "LISTSTATUS_BATCH", "GETCONTENTSUMMARY",
		"GETQUOTAUSAGE", "GETFILECHECKSUM", "GETHOMEDIRECTORY", "GETDELEGATIONTOKEN", "GETTRASHROOT",
		"GETTRASHROOTS", "GETXATTRS", "LISTXATTRS", "CHECKACCESS", "GETALLSTORAGEPOLICY", "GETSTORAGEPOLICY",
		"GETSNAPSHOTDIFF", "GETSNAPSHOTDIFFLISTING", "GETSNAPSHOTTABLEDIRECTORYLIST", "GETSNAPSHOTLIST",
		"GETFILEBLOCKLOCATIONS", "GETECPOLICY", "GETECPOLICIES", "GETECCODECS", "GETACLSTATUS",
		"GETSERVERDEFAULTS", "GETLINKTARGET", "GETFILELINKSTATUS", "GETSTATUS")
	add(http.MethodPut, "CREATE", "MKDIRS", "CREATESYMLINK", "RENAME", "SETREPLICATION", "SETOWNER",
		"SETPERMISSION", "SETTIMES", "RENEWDELEGATIONTOKEN", "CANCELDELEGATIONTOKEN", "ALLOWSNAPSHOT",
		"DISALLOWSNAPSHOT", "CREATESNAPSHOT", "RENAMESNAPSHOT", "SETXATTR", "REMOVEXATTR",
		"SETSTORAGEPOLICY", "SATISFYSTORAGEPOLICY", "ENABLEECPOLICY", "DISABLEECPOLICY", "SETECPOLICY",
		"MODIFYACLENTRIES", "REMOVEACLENTRIES", "REMOVEDEFAULTACL", "REMOVEACL", "SETACL", "SETQUOTA",
		"SETQUOTABYSTORAGETYPE")
	add(http.MethodPost, "APPEND", "CONCAT", "TRUNCATE", "UNSETSTORAGEPOLICY", "UNSETECPOLICY")
	add(http.MethodDelete, "DELETE", "DELETESNAPSHOT")

	set := func(op string, f func(*opSpec)) {
		s := operations[op]
		f(&s)
		operations[op] = s
	}
	for _, op := range []string{"CREATE", "APPEND"} {
		set(op, func(s *opSpec) { s.redirects, s.write = true, true })
	}
	for _, op := range []string{"OPEN", "GETFILECHECKSUM"} {
		set(op, func(s *opSpec) { s.redirects = true })
	}
	need := map[string][]string{
		"RENAME": {"destination"}, "CREATESYMLINK": {"destination"}, "CONCAT": {"sources"},
		"TRUNCATE": {"newlength"}, "RENAMESNAPSHOT": {"oldsnapshotname", "snapshotname"},
		"DELETESNAPSHOT": {"snapshotname"}, "SETXATTR": {"xattr.name"}, "REMOVEXATTR": {"xattr.name"},
		"SETSTORAGEPOLICY": {"storagepolicy"}, "RENEWDELEGATIONTOKEN": {"token"},
		"CANCELDELEGATIONTOKEN": {"token"}, "CHECKACCESS": {"fsaction"}, "SETACL": {"aclspec"},
		"MODIFYACLENTRIES": {"aclspec"}, "REMOVEACLENTRIES": {"aclspec"},
	}
	for op, params := range need {
		set(op, func(s *opSpec) { s.required = params })
	}
}

// OpMethod returns the HTTP method WebHDFS sends op with (op in upper
// case, e.g. "CREATE" → PUT); ok is false for an op WebHDFS does not have.
func OpMethod(op string) (method string, ok bool) {
	spec, ok := operations[op]
	return spec.method, ok
}
