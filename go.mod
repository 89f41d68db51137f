module github.com/shakedown/shakedown

go 1.26.8

require (
	filippo.io/edwards25519 v1.2.0 // indirect
	github.com/HdrHistogram/hdrhistogram-go v1.4.0 // indirect
	github.com/go-sql-driver/mysql v1.10.1 // indirect
	github.com/spf13/pflag v1.0.10 // indirect
)
