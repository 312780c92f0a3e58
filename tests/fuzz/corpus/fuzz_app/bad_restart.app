app t
plugin p ./p.so
supervisor s one_for_one
  server p.b restart=bogus
