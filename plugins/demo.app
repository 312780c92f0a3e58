# demo.app - smarm-run's demo (docs/smarm-run.md): the shipped plugins
# under one supervision tree, with a load generator driving them.
#
#   ./build/tools/smarm-run build/plugins/demo.app
#
# and, installed beside the plugins (smarm.pc's pluginsdir):
#
#   smarm-run "$(pkg-config --variable=pluginsdir smarm)/demo.app"
#
# loadgen's timer calls and casts to the counter and the store by name
# every millisecond and pokes the crasher every 300 ms (a crash, then a
# fault: a NULL write the node contains); the crasher's
# supervisor restarts it each time. The run ends by itself after 4 s.
app demo
run 4s
plugin counter ./counter.so
plugin kv ./kv.so
plugin crasher ./crasher.so
plugin loadgen ./loadgen.so

supervisor root one_for_one intensity 20/1s
  server counter.counter name=counter args="0"
  supervisor store rest_for_one intensity 20/1s
    server kv.kv name=kv shutdown=2s
    server crasher.crasher name=crasher shutdown=brutal
  server loadgen.loadgen name=loadgen args="counter=${counter} kv=${kv} crasher=${crasher} every=1 batch=20 poke=300"
