app t
workers 2
plugin p "./p q.so"
supervisor s one_for_all intensity 0/1ms
 server p.a id=x name=y ready=infinity shutdown=infinity
 supervisor u rest_for_one
   supervisor v one_for_one
     server p.b args="a \"b\" \\ # c" # comment
 server p.c restart=temporary
