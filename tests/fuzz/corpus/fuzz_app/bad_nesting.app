app t
plugin p ./p.so
supervisor s one_for_one
  server p.b
    server p.c
	server p.d
