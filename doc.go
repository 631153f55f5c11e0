// Package heureka is the vocabulary of the heureka service registry: the
// instance record Eureka clients register, its status and lease fields, the
// limits every input is held to, and the errors the rest of the program maps
// to protocol answers.
//
// The package does no I/O. The wire codec lives in package eureka, the lease
// table in package registry and the HTTP surface in internal/httpapi; they all
// speak in these types.
package heureka
