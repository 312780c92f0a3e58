app demo
run 5s
plugin counter ./counter.so
plugin kv ./kv.so
supervisor root one_for_one intensity 3/5s
  server counter.counter name=counter restart=permanent shutdown=5s args="start=0"
  supervisor pool rest_for_one
    server kv.kv name=kv restart=transient shutdown=brutal
