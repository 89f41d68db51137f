package cli

// slapHelp is the help of shakedown slap.
const slapHelp = `usage: shakedown slap [mysqlslap options]

Runs a query, a file of queries, or auto-generated SQL at each --concurrency,
--iterations times, exactly as mysqlslap does (same options, same statements in
the same order, the same summary lines), then prints what mysqlslap does not say:
queries per second, latency percentiles overall and per statement, connect time
and errors by code.

  shakedown slap -h127.0.0.1 -P3306 -ubench -pSECRET --create-schema=test \
      --concurrency=16,64 --iterations=2 --number-of-queries=20000 --delimiter=';' \
      --query='begin;update seckill set num=num-1 where id=1 and num>1;commit;'

Options:
`
