module github.com/heureka-project/heureka/tests/tour

go 1.26.8

require github.com/colinmarc/hdfs/v2 v2.4.0
