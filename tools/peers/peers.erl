%% peers.erl - Erlang peer benchmarks for libsmarm (DESIGN.md section 7).
%%! +P 2000000
%%
%% The "%%!" line above is read by escript (emulator flags); for erlc it is
%% an ordinary comment.  skynet_actor keeps ~1.1M processes alive at once on
%% one scheduler, so the process limit must be raised (+P) in every mode.
%%
%% Run either way (workloads as arguments; none or "all" = every workload):
%%
%%   ERL_FLAGS="+S 1:1" escript peers.erl [runs=R] [budget=S] [workload...]
%%   erlc -o DIR peers.erl &&
%%     erl +S 1:1 +P 2000000 -noshell -pa DIR -run peers main [runs=R] [workload...]
%%   erl ... -noshell -pa DIR -s peers main [workload...]   (atoms work too)
%%
%% Output, one CSV line per workload on stdout:
%%
%%   WORKLOAD,erlang,SCHEDULERS,ns_per_op
%%
%% SCHEDULERS is erlang:system_info(schedulers_online).  For idle_bytes the
%% last column is bytes per parked process (see idle_bytes/0 for what is
%% counted), for fairness a ratio (max/min of spinners' progress) and for
%% wake_latency the p99 lateness of a 10 ms sleep among spinners, in ns.  Per-run figures go to stderr.  Each workload runs one warm-up
%% run and then R timed runs (default 5, fewer if one run is so slow that the
%% workload would overrun its time budget); the median is printed.
-module(peers).
-mode(compile).

-export([main/1]).
%% gen_server callbacks for gen_server_call and gen_server_cast
-export([init/1, handle_call/3, handle_cast/2]).
%% supervisor child start for sup_restart
-export([sup_child/3]).
%% the producers of sup_shutdown_load
-export([sd_producer/2]).
%% gen_statem callbacks for gen_statem_event
-export([callback_mode/0, handle_event/4]).
%% where a hibernated process of idle_bytes_hibernated goes on
-export([idle_hib_wake/1]).

-define(SPAWN_N, 100000).
-define(CHAIN_N, 100000).
-define(PING_N, 1000000).
-define(RING_SIZE, 1000).
-define(RING_N, 1000000).
-define(YIELD_N, 1000000).
-define(SKYNET_N, 1000000).
-define(SKYNET_DIV, 10).
-define(SKYNET_SUM, 499999500000).
-define(CALL_N, 1000000).
-define(CAST_N, 1000000).
-define(STATEM_N, 1000000).
-define(STATEM_BATCH, 1000).
-define(IDLE_N, 100000).
-define(IDLE_HIB_N, 1000000).       % idle_bytes_*hibernated, as smarm-bench
-define(ACTORS_10M_N, 10000000).    % actors_10m, as smarm-bench
-define(FAIR_SETTLE_MS, 100).       % spinners all started
-define(FAIR_WINDOW_MS, 1000).      % the measured window
-define(FAIR_STARVED, 1.0e9).       % the ratio printed for a 0 count
-define(WAKE_N, 50).                % sleeps per wake_latency run
-define(WAKE_SLEEP_MS, 10).
-define(SPIN_CHUNK, 1024).          % iterations between counter stores
-define(SD_N, 2000).                % children of sup_shutdown_*
-define(SD_PRODUCERS, 4).
-define(SD_LOAD_MS, 50).

workloads() ->
    [{"spawn_join", fun spawn_join/0},
     {"chained_spawn", fun chained_spawn/0},
     {"ping_pong_rtt", fun ping_pong/0},
     {"send_by_name", fun send_by_name/0},
     {"ring_hop", fun ring_hop/0},
     {"yield", fun yield_bench/0},
     {"skynet_actor", fun skynet_bench/0},
     {"gen_server_call", fun gen_server_call/0},
     {"gen_server_cast", fun gen_server_cast/0},
     {"idle_bytes", fun idle_bytes/0},
     {"idle_bytes_hibernated", fun idle_bytes_hibernated/0},
     {"idle_bytes_server_hibernated", fun idle_bytes_server_hibernated/0},
     {"actors_10m", fun actors_10m/0},
     {"fairness", fun fairness/0},
     {"wake_latency", fun wake_latency/0},
     {"monitor_down", fun monitor_down/0},
     {"link_cascade", fun link_cascade/0},
     {"sup_restart", fun() -> sup_restart(1000) end},
     {"sup_restart_100k", fun() -> sup_restart(100000) end},
     {"gen_statem_event", fun gen_statem_event/0},
     {"sup_shutdown_quiet", fun() -> sup_shutdown(false) end},
     {"sup_shutdown_load", fun() -> sup_shutdown(true) end}].

%% ---------------------------------------------------------------------------
%% Driver

main(Args0) ->
    Args = [to_str(A) || A <- Args0],
    Code = try run(Args)
           catch Class:Reason:Stack ->
                   err("peers: ~p:~p~n~p~n", [Class, Reason, Stack]),
                   1
           end,
    halt(Code).

to_str(A) when is_atom(A) -> atom_to_list(A);
to_str(A) when is_list(A) -> A.

run(Args) ->
    {Opts, Names0} = parse(Args, #{runs => 5, budget => 18}, []),
    Names = case Names0 of
                [] -> [N || {N, _} <- workloads()];
                ["all"] -> [N || {N, _} <- workloads()];
                _ -> Names0
            end,
    Sel = [case lists:keyfind(N, 1, workloads()) of
               false -> usage("unknown workload " ++ N);
               W -> W
           end || N <- Names],
    Scheds = erlang:system_info(schedulers_online),
    lists:foreach(
      fun({Name, Fun}) ->
              Rs = in_fresh_process(fun() -> samples(Name, Fun, Opts) end),
              %% fairness and wake_latency return {Figure, Note}.
              Xs = [case R of {X, _} -> X; X -> X end || R <- Rs],
              err("# erlang ~s schedulers=~b runs: ~s~n",
                  [Name, Scheds, string:join([fmt(X) || X <- Xs], " ")]),
              case [N || {_, N} <- Rs] of
                  [] -> ok;
                  Notes -> err("# erlang-note ~s schedulers=~b per run ~s: ~s~n",
                               [Name, Scheds, note_what(Name),
                                string:join(Notes, " ")])
              end,
              io:format("~s,erlang,~b,~s~n", [Name, Scheds, fmt(median(Xs))])
      end, Sel),
    0.

%% Options are "name=value" words, not "-flag value": erl would take a
%% "-flag" after -run/-s as one of its own init flags.
parse(["runs=" ++ R | T], O, Acc) -> parse(T, O#{runs => pos_int(R)}, Acc);
parse(["budget=" ++ B | T], O, Acc) -> parse(T, O#{budget => pos_int(B)}, Acc);
parse(["-" ++ _ = F | _], _, _) -> usage("unknown flag " ++ F);
parse([N | T], O, Acc) -> parse(T, O, [N | Acc]);
parse([], O, Acc) -> {O, lists:reverse(Acc)}.

pos_int(S) ->
    case string:to_integer(S) of
        {N, ""} when N > 0 -> N;
        _ -> usage("bad number " ++ S)
    end.

usage(Msg) ->
    err("~s~nusage: peers [runs=R] [budget=SECONDS] [workload...|all]~n"
        "workloads: ~s~n",
        [Msg, string:join([N || {N, _} <- workloads()], " ")]),
    halt(2).

err(Fmt, Args) -> io:format(standard_error, Fmt, Args).

%% 3 decimals below 10 (the fairness ratios), as smarm-bench prints.
fmt(X) when X < 10 -> float_to_list(float(X), [{decimals, 3}]);
fmt(X) -> float_to_list(float(X), [{decimals, 1}]).

note_what("fairness") -> "min/max count";
note_what("actors_10m") -> "create ns/proc wall/cpu";
note_what("wake_latency") -> "p50/p99 ms".

%% Run F in a new process (fresh heap, empty mailbox) and return its result.
in_fresh_process(F) ->
    {Pid, Ref} = spawn_monitor(fun() -> exit({ok, F()}) end),
    receive
        {'DOWN', Ref, process, Pid, {ok, Res}} -> Res;
        {'DOWN', Ref, process, Pid, Why} -> error(Why)
    end.

samples(_Name, Fun, #{runs := Runs, budget := Budget}) ->
    T0 = now_ns(),
    _ = Fun(),                                  % warm-up
    Warm = now_ns() - T0,
    Fit = max(1, (Budget * 1000000000) div max(Warm, 1) - 1),
    N = min(Runs, Fit),
    [begin erlang:garbage_collect(), Fun() end || _ <- lists:seq(1, N)].

median(Xs) ->
    S = lists:sort(Xs),
    L = length(S),
    case L rem 2 of
        1 -> lists:nth(L div 2 + 1, S);
        0 -> (lists:nth(L div 2, S) + lists:nth(L div 2 + 1, S)) / 2
    end.

now_ns() -> erlang:monotonic_time(nanosecond).

per_op(T0, N) -> (now_ns() - T0) / N.

%% ---------------------------------------------------------------------------
%% Workloads

%% spawn_join: spawn N processes that exit at once; each sends the parent a
%% message just before exiting; the parent waits for all N messages.
%% The parent keeps its mailbox off-heap: with the default on-heap queue,
%% the ~100000 'done' messages that pile up while it is still spawning are
%% rescanned by every GC of the parent and spawn_join costs ~10x more (a GC
%% artefact of the measuring process, not the cost of a process).
spawn_join() ->
    process_flag(message_queue_data, off_heap),
    Parent = self(),
    T0 = now_ns(),
    spawn_n(?SPAWN_N, Parent),
    wait_n(?SPAWN_N),
    per_op(T0, ?SPAWN_N).

spawn_n(0, _) -> ok;
spawn_n(N, Parent) ->
    spawn(fun() -> Parent ! done end),
    spawn_n(N - 1, Parent).

wait_n(0) -> ok;
wait_n(N) -> receive done -> wait_n(N - 1) end.

%% monitor_down: spawn_monitor N processes that exit at once; the parent
%% receives the N 'DOWN' messages (smarm-bench's monitor_down: spawn with
%% the monitor option, one Down each).
monitor_down() ->
    process_flag(message_queue_data, off_heap),  % see spawn_join/0
    T0 = now_ns(),
    spawn_monitor_n(?SPAWN_N),
    wait_down(?SPAWN_N),
    per_op(T0, ?SPAWN_N).

spawn_monitor_n(0) -> ok;
spawn_monitor_n(N) ->
    spawn_monitor(fun() -> ok end),
    spawn_monitor_n(N - 1).

wait_down(0) -> ok;
wait_down(N) -> receive {'DOWN', _, process, _, normal} -> wait_down(N - 1) end.

%% link_cascade: a chain of N processes, each spawn_linked by the one
%% before and waiting; the tail reports itself, the parent monitors it,
%% kills the head and waits for the tail's 'DOWN' (killed propagates along
%% the links). Timed from the kill; ns per process.
link_cascade() ->
    Parent = self(),
    Head = spawn(fun() -> cascade(?CHAIN_N - 1, Parent) end),
    Tail = receive {tail, P} -> P end,
    Ref = monitor(process, Tail),
    T0 = now_ns(),
    exit(Head, kill),
    receive {'DOWN', Ref, process, _, _} -> ok end,
    per_op(T0, ?CHAIN_N).

cascade(0, Parent) -> Parent ! {tail, self()}, receive never -> ok end;
cascade(N, Parent) ->
    spawn_link(fun() -> cascade(N - 1, Parent) end),
    receive never -> ok end.

%% chained_spawn: each process spawns the next; the last one tells the parent.
chained_spawn() ->
    Parent = self(),
    T0 = now_ns(),
    spawn(fun() -> chain(?CHAIN_N - 1, Parent) end),
    receive done -> ok end,
    per_op(T0, ?CHAIN_N).

chain(0, Parent) -> Parent ! done;
chain(N, Parent) -> spawn(fun() -> chain(N - 1, Parent) end).

%% ping_pong_rtt: two processes bounce one message N times.
ping_pong() ->
    Parent = self(),
    Pong = spawn(fun pong/0),
    T0 = now_ns(),
    spawn(fun() -> ping(?PING_N, Pong), Parent ! done end),
    receive done -> ok end,
    R = per_op(T0, ?PING_N),
    Pong ! stop,
    R.

ping(0, _) -> ok;
ping(N, Pong) ->
    Pong ! {self(), N},
    receive N -> ping(N - 1, Pong) end.

pong() ->
    receive
        {From, N} -> From ! N, pong();
        stop -> ok
    end.

%% send_by_name: ping_pong_rtt with both sides registered and every send
%% addressed by name (register/2 and Name ! Msg, resolved per send).
send_by_name() ->
    Parent = self(),
    Pong = spawn(fun() -> receive go -> name_pong() end end),
    true = register(peers_pong, Pong),
    Pong ! go,
    T0 = now_ns(),
    Ping = spawn(fun() ->
                         true = register(peers_ping, self()),
                         name_ping(?PING_N),
                         Parent ! done
                 end),
    receive done -> ok end,
    R = per_op(T0, ?PING_N),
    %% Both names are free again before the next run registers them.
    PingRef = monitor(process, Ping),
    PongRef = monitor(process, Pong),
    peers_pong ! stop,
    receive {'DOWN', PingRef, process, _, _} -> ok end,
    receive {'DOWN', PongRef, process, _, _} -> ok end,
    R.

name_ping(0) -> ok;
name_ping(N) ->
    peers_pong ! N,
    receive N -> name_ping(N - 1) end.

name_pong() ->
    receive
        stop -> ok;
        N -> peers_ping ! N, name_pong()
    end.

%% ring_hop: RING_SIZE processes in a ring pass a counter that is decremented
%% on every hop; the process that receives 0 tells the parent.
ring_hop() ->
    Parent = self(),
    First = spawn(fun() -> receive {next, Nx} -> ring_node(Nx, Parent) end end),
    Rest = ring_build(?RING_SIZE - 1, First, Parent, []),
    First ! {next, hd(Rest)},
    T0 = now_ns(),
    First ! ?RING_N,
    receive done -> ok end,
    R = per_op(T0, ?RING_N),
    [P ! stop || P <- [First | Rest]],
    R.

%% Builds nodes 2..RING_SIZE back to front; returns them in ring order.
ring_build(0, _Next, _Parent, Acc) -> Acc;
ring_build(K, Next, Parent, Acc) ->
    P = spawn(fun() -> ring_node(Next, Parent) end),
    ring_build(K - 1, P, Parent, [P | Acc]).

ring_node(Next, Parent) ->
    receive
        0 -> Parent ! done, ring_node(Next, Parent);
        V when is_integer(V) -> Next ! V - 1, ring_node(Next, Parent);
        stop -> ok
    end.

%% yield: two processes per scheduler each call erlang:yield() N times.
%% ns per yield = total / (2N): one scheduler's cost per yield.
yield_bench() ->
    Parent = self(),
    N = 2 * erlang:system_info(schedulers_online),
    Body = fun() -> receive go -> ok end, yield_n(?YIELD_N), Parent ! done end,
    Ps = [spawn(Body) || _ <- lists:seq(1, N)],
    T0 = now_ns(),
    [P ! go || P <- Ps],
    wait_n(N),
    per_op(T0, 2 * ?YIELD_N).

yield_n(0) -> ok;
yield_n(N) -> erlang:yield(), yield_n(N - 1).

%% skynet_actor: 10-ary tree of processes; leaves send their number, inner
%% nodes sum their children and send the sum up.  ns per leaf.
skynet_bench() ->
    Need = ?SKYNET_N + ?SKYNET_N div (?SKYNET_DIV - 1) + 100,
    case erlang:system_info(process_limit) of
        L when L < Need ->
            err("skynet_actor: process limit ~b < ~b; run erl with +P 2000000~n",
                [L, Need]),
            halt(1);
        _ -> ok
    end,
    Parent = self(),
    T0 = now_ns(),
    spawn(fun() -> skynet(Parent, 0, ?SKYNET_N) end),
    Sum = receive S when is_integer(S) -> S end,
    R = per_op(T0, ?SKYNET_N),
    case Sum of
        ?SKYNET_SUM -> R;
        _ ->
            err("skynet_actor: wrong sum ~b, want ~b~n", [Sum, ?SKYNET_SUM]),
            halt(1)
    end.

skynet(Parent, Num, 1) ->
    Parent ! Num;
skynet(Parent, Num, Size) ->
    Self = self(),
    Sub = Size div ?SKYNET_DIV,
    [spawn(fun() -> skynet(Self, Num + I * Sub, Sub) end)
     || I <- lists:seq(0, ?SKYNET_DIV - 1)],
    Parent ! sum_n(?SKYNET_DIV, 0).

sum_n(0, Acc) -> Acc;
sum_n(K, Acc) -> receive S when is_integer(S) -> sum_n(K - 1, Acc + S) end.

%% gen_server_call: gen_server:call/2 to a minimal gen_server that adds the
%% argument to its state and replies with the new state.
gen_server_call() ->
    {ok, Srv} = gen_server:start(?MODULE, 0, []),
    T0 = now_ns(),
    ok = call_n(Srv, 1, ?CALL_N),
    R = per_op(T0, ?CALL_N),
    gen_server:stop(Srv),
    R.

%% gen_server_cast: N gen_server:cast/2 of {inc, 1} into a minimal
%% gen_server, then one gen_server:call/2 that returns N once every cast was
%% served; ns per cast.
gen_server_cast() ->
    {ok, Srv} = gen_server:start(?MODULE, 0, []),
    T0 = now_ns(),
    ok = cast_n(Srv, ?CAST_N),
    ?CAST_N = gen_server:call(Srv, get),
    R = per_op(T0, ?CAST_N),
    gen_server:stop(Srv),
    R.

cast_n(_Srv, 0) -> ok;
cast_n(Srv, K) -> gen_server:cast(Srv, {inc, 1}), cast_n(Srv, K - 1).

call_n(_Srv, I, N) when I > N -> ok;
call_n(Srv, I, N) ->
    I = gen_server:call(Srv, {add, 1}),
    call_n(Srv, I + 1, N).

%% sup_restart: a one_for_one supervisor with one permanent child that
%% crashes at once on every start until it has been started N + 1 times;
%% the last one reports.  Timed from supervisor:start_link to the report;
%% ns per restart.  Logging is off (a crash report per restart would be
%% most of the cost).  OTP's period is whole seconds, so the intensity is
%% N + 1 restarts per 3600 s: it never trips, and the supervisor's list of
%% restart instants grows to N (pruned on each restart, so each restart
%% costs more as N grows).
sup_restart(N) ->
    logger:set_primary_config(level, none),
    C = counters:new(1, []),
    Parent = self(),
    process_flag(trap_exit, true),
    T0 = now_ns(),
    {ok, Sup} = supervisor:start_link(?MODULE, {sup_restart, C, Parent, N}),
    receive sup_done -> ok end,
    R = per_op(T0, N),
    unlink(Sup),
    exit(Sup, shutdown),
    receive {'EXIT', Sup, _} -> ok after 0 -> ok end,
    process_flag(trap_exit, false),
    R.

sup_child(C, Parent, N) ->
    {ok, spawn_link(fun() ->
        counters:add(C, 1, 1),
        case counters:get(C, 1) > N of
            true -> Parent ! sup_done, receive never -> ok end;
            false -> exit(crash)
        end
    end)}.

%% sup_shutdown_quiet, sup_shutdown_load: a one_for_one supervisor of
%% SD_N registered gen_servers (sd0..; the default worker shutdown, 5000
%% ms) shut down with exit(Sup, shutdown), timed to its 'DOWN'; ns per
%% child (smarm-bench's workloads of the same names). _load first lets
%% SD_PRODUCERS processes cast {inc, 1} by name, 64 to each server in
%% turn, for SD_LOAD_MS, and they go on casting through the shutdown (a
%% cast to a name gone is dropped, as gen_server:cast does).
sup_shutdown(Load) ->
    {ok, Sup} = supervisor:start_link(?MODULE, sup_shutdown),
    unlink(Sup),
    Ref = erlang:monitor(process, Sup),
    Ps = [spawn(?MODULE, sd_producer, [K * (?SD_N div ?SD_PRODUCERS), 0])
          || Load, K <- lists:seq(0, ?SD_PRODUCERS - 1)],
    Load andalso timer:sleep(?SD_LOAD_MS),
    T0 = now_ns(),
    exit(Sup, shutdown),
    receive {'DOWN', Ref, process, Sup, _} -> ok end,
    R = per_op(T0, ?SD_N),
    [exit(P, kill) || P <- Ps],
    R.

sd_producer(K, 64) -> sd_producer(K + 1, 0);
sd_producer(K, I) ->
    gen_server:cast(list_to_atom("sd" ++ integer_to_list(K rem ?SD_N)),
                    {inc, 1}),
    sd_producer(K, I + 1).

init(sup_shutdown) ->
    {ok, {#{strategy => one_for_one, intensity => 1, period => 5},
          [#{id => I,
             start => {gen_server, start_link,
                       [{local, list_to_atom("sd" ++ integer_to_list(I))},
                        ?MODULE, 0, []]}}
           || I <- lists:seq(0, ?SD_N - 1)]}};
init({sup_restart, C, Parent, N}) ->
    {ok, {#{strategy => one_for_one, intensity => N + 1, period => 3600},
          [#{id => c, start => {?MODULE, sup_child, [C, Parent, N]},
             restart => permanent, shutdown => brutal_kill}]}};
init(door) -> {ok, closed, 0};
init(S) -> {ok, S}.
handle_call({add, X}, _From, S) -> {reply, S + X, S + X};
handle_call(get, _From, S) -> {reply, S, S}.
handle_cast({inc, X}, S) -> {noreply, S + X};
handle_cast(_Msg, S) -> {noreply, S}.

%% gen_statem_event: STATEM_N button casts through a door-lock gen_statem
%% (push closed -> open, pull open -> closed), a get_state call after
%% every STATEM_BATCH of them; ns per event (smarm-bench's workload of
%% the same name, through plugins/door.so).
gen_statem_event() ->
    {ok, Door} = gen_statem:start(?MODULE, door, []),
    T0 = now_ns(),
    ok = buttons(Door, 0, ?STATEM_N),
    R = per_op(T0, ?STATEM_N),
    gen_statem:stop(Door),
    R.

buttons(_Door, N, N) -> ok;
buttons(Door, I, N) ->
    gen_statem:cast(Door, case I rem 2 of 0 -> push; 1 -> pull end),
    case (I + 1) rem ?STATEM_BATCH of
        0 -> closed = gen_statem:call(Door, get_state);
        _ -> ok
    end,
    buttons(Door, I + 1, N).

callback_mode() -> handle_event_function.
handle_event(cast, push, closed, D) -> {next_state, open, D};
handle_event(cast, pull, open, D) -> {next_state, closed, D};
handle_event(cast, _, _, _) -> keep_state_and_data;
handle_event({call, From}, get_state, S, _) ->
    {keep_state_and_data, [{reply, From, S}]}.

%% idle_bytes: N processes, each parked in a receive.  Reported figure:
%%   (delta erlang:memory(processes) - delta of the measuring process's own
%%    process_info(memory)) / N
%% i.e. the memory the runtime accounts to the N parked processes (control
%% block, heap+stack, the closure they run), without the pid list the parent
%% holds.  This is allocator-accounted memory, not RSS; the RSS growth of the
%% emulator and process_info(Pid, memory) of one child go to stderr for
%% comparison.
idle_bytes() ->
    process_flag(message_queue_data, off_heap),  % see spawn_join/0
    Parent = self(),
    erlang:garbage_collect(),
    M0 = erlang:memory(processes),
    {memory, P0} = process_info(self(), memory),
    Rss0 = rss(),
    Pids = idle_spawn(?IDLE_N, Parent, []),
    wait_ready(?IDLE_N),
    erlang:garbage_collect(),
    M1 = erlang:memory(processes),
    {memory, P1} = process_info(self(), memory),
    Rss1 = rss(),
    {memory, One} = process_info(hd(Pids), memory),
    [P ! stop || P <- Pids],
    wait_n(?IDLE_N),
    PerProc = ((M1 - M0) - (P1 - P0)) / ?IDLE_N,
    err("#   idle_bytes: memory(processes) ~s B/proc, process_info(memory) of "
        "one ~b B, emulator RSS growth ~s B/proc~n",
        [fmt(PerProc), One, fmt((Rss1 - Rss0) / ?IDLE_N)]),
    PerProc.

idle_spawn(0, _, Acc) -> Acc;
idle_spawn(N, Parent, Acc) ->
    P = spawn(fun() ->
                      Parent ! ready,
                      receive stop -> Parent ! done end
              end),
    idle_spawn(N - 1, Parent, [P | Acc]).

%% idle_bytes_hibernated: as idle_bytes with IDLE_HIB_N processes, each
%% hibernated (erlang:hibernate/3: its heap and stack are dropped, it goes
%% on at idle_hib_wake/1 when a message comes).  Same figure as
%% idle_bytes (allocator-accounted); the RSS growth goes to stderr.
idle_bytes_hibernated() ->
    #{mem := Mem, rss := Rss, one := One} = hib_measure(?IDLE_HIB_N),
    PerProc = Mem / ?IDLE_HIB_N,
    err("#   idle_bytes_hibernated: memory(processes) ~s B/proc, "
        "process_info(memory) of one ~b B, emulator RSS growth ~s B/proc~n",
        [fmt(PerProc), One, fmt(Rss / ?IDLE_HIB_N)]),
    PerProc.

%% actors_10m: ACTORS_10M_N processes as idle_bytes_hibernated's, all
%% alive at once (needs erl +P above it: run-peers.sh passes 16777216
%% when this workload runs).  Figure: emulator RSS growth per process,
%% less the parent's own growth (its list of pids), the same measure as
%% smarm-bench's actors_10m; note: wall and CPU (statistics(runtime),
%% every scheduler) ns per process from the first spawn until all are
%% ready, each hibernating right after.
actors_10m() ->
    N = ?ACTORS_10M_N,
    #{mem := Mem, rss := Rss, parent := Par, wall := Wall, cpu := Cpu} =
        hib_measure(N),
    err("#   actors_10m: memory(processes) ~s B/proc, emulator RSS growth "
        "~s B/proc (~s GiB)~n",
        [fmt(Mem / N), fmt(Rss / N), fmt(Rss / (1 bsl 30))]),
    {(Rss - Par) / N,
     lists:flatten(io_lib:format("~b/~b", [Wall div N, Cpu div N]))}.

%% N processes hibernated at once (idle_hib_spawn), measured, then each
%% sent stop: memory(processes) growth less the parent's own (mem), the
%% parent's own growth (parent), the emulator's RSS growth (rss), one
%% process's process_info(memory) (one), and the wall and CPU ns
%% (statistics(runtime), every scheduler) from the first spawn until
%% all were ready (wall, cpu).
hib_measure(N) ->
    process_flag(message_queue_data, off_heap),
    Parent = self(),
    erlang:garbage_collect(),
    M0 = erlang:memory(processes),
    {memory, P0} = process_info(self(), memory),
    Rss0 = rss(),
    {C0, _} = erlang:statistics(runtime),
    T0 = erlang:monotonic_time(nanosecond),
    Pids = idle_hib_spawn(N, Parent, []),
    wait_ready(N),
    T1 = erlang:monotonic_time(nanosecond),
    {C1, _} = erlang:statistics(runtime),
    timer:sleep(100),                 % each hibernates right after ready
    erlang:garbage_collect(),
    M1 = erlang:memory(processes),
    {memory, P1} = process_info(self(), memory),
    Rss1 = rss(),
    {memory, One} = process_info(hd(Pids), memory),
    [P ! stop || P <- Pids],
    wait_n(N),
    #{mem => (M1 - M0) - (P1 - P0), parent => P1 - P0, rss => Rss1 - Rss0,
      one => One, wall => T1 - T0, cpu => (C1 - C0) * 1000000}.

idle_hib_spawn(0, _, Acc) -> Acc;
idle_hib_spawn(N, Parent, Acc) ->
    P = spawn(fun() ->
                      Parent ! ready,
                      erlang:hibernate(?MODULE, idle_hib_wake, [Parent])
              end),
    idle_hib_spawn(N - 1, Parent, [P | Acc]).

idle_hib_wake(Parent) -> receive stop -> Parent ! done end.

%% idle_bytes_server_hibernated: IDLE_HIB_N gen_servers (this module's
%% counter callbacks) started with {hibernate_after, 0}: each hibernates
%% (proc_lib:hibernate) whenever its mailbox is empty.  Same figure as
%% idle_bytes; then each is called once ({add, 1}: it wakes, answers,
%% hibernates again) and stopped, as smarm-bench's workload.
idle_bytes_server_hibernated() ->
    erlang:garbage_collect(),
    M0 = erlang:memory(processes),
    {memory, P0} = process_info(self(), memory),
    Rss0 = rss(),
    Srvs = [begin
                {ok, S} = gen_server:start(?MODULE, 0, [{hibernate_after, 0}]),
                S
            end || _ <- lists:seq(1, ?IDLE_HIB_N)],
    timer:sleep(100),
    erlang:garbage_collect(),
    M1 = erlang:memory(processes),
    {memory, P1} = process_info(self(), memory),
    Rss1 = rss(),
    {memory, One} = process_info(hd(Srvs), memory),
    [1 = gen_server:call(S, {add, 1}) || S <- Srvs],
    [gen_server:stop(S) || S <- Srvs],
    PerProc = ((M1 - M0) - (P1 - P0)) / ?IDLE_HIB_N,
    err("#   idle_bytes_server_hibernated: memory(processes) ~s B/server, "
        "process_info(memory) of one ~b B, emulator RSS growth ~s B/server~n",
        [fmt(PerProc), One, fmt((Rss1 - Rss0) / ?IDLE_HIB_N)]),
    PerProc.

wait_ready(0) -> ok;
wait_ready(N) -> receive ready -> wait_ready(N - 1) end.

rss() ->
    case file:read_file("/proc/self/statm") of
        {ok, B} ->
            [_, Res | _] = string:lexemes(binary_to_list(B), " \n"),
            list_to_integer(Res) * page_size();
        _ -> 0
    end.

page_size() ->
    case string:to_integer(os:cmd("getconf PAGESIZE")) of
        {N, _} when is_integer(N), N > 0 -> N;
        _ -> 4096
    end.

%% ---------------------------------------------------------------------------
%% Saturation: spinners that never block.  A spinner is a tight tail-recursive
%% loop (a small LCG), so only reduction-based preemption moves it.  Counter I
%% of the atomics array is spinner I's progress (stored every SPIN_CHUNK
%% iterations); the last slot is the stop flag.

spin(Ref, I, Stop, X, N) when N rem ?SPIN_CHUNK =:= 0 ->
    atomics:put(Ref, I, N),
    case atomics:get(Ref, Stop) of
        0 -> spin(Ref, I, Stop, lcg(X), N + 1);
        _ -> X
    end;
spin(Ref, I, Stop, X, N) -> spin(Ref, I, Stop, lcg(X), N + 1).

lcg(X) -> (X * 1103515245 + 12345) band 16#FFFFF.   % stays a small integer

%% Start K spinners; returns {Ref, StopFun}.
start_spinners(K) ->
    Ref = atomics:new(K + 1, [{signed, false}]),
    Ms = [spawn_monitor(fun() -> spin(Ref, I, K + 1, 1, 1) end)
          || I <- lists:seq(1, K)],
    {Ref, fun() ->
                  atomics:put(Ref, K + 1, 1),
                  [receive {'DOWN', M, process, P, normal} -> ok;
                           {'DOWN', M, process, P, Why} -> error({spinner, Why})
                   end || {P, M} <- Ms],
                  ok
          end}.

%% fairness: 3*schedulers spinners; after a settling pause the counters are
%% read, then again after FAIR_WINDOW_MS.  Result: max/min of the progress
%% over the window (a ratio, not ns).
fairness() ->
    K = 3 * erlang:system_info(schedulers_online),
    {Ref, Stop} = start_spinners(K),
    timer:sleep(?FAIR_SETTLE_MS),
    Base = [atomics:get(Ref, I) || I <- lists:seq(1, K)],
    timer:sleep(?FAIR_WINDOW_MS),
    Ds = [atomics:get(Ref, I) - B || {I, B} <- lists:zip(lists:seq(1, K), Base)],
    Stop(),
    Lo = lists:min(Ds),
    Hi = lists:max(Ds),
    Note = lists:flatten(io_lib:format("~b/~b", [Lo, Hi])),
    case Lo of
        0 -> {?FAIR_STARVED, Note};
        _ -> {Hi / Lo, Note}
    end.

%% wake_latency: 2*schedulers spinners; another process does WAKE_N sleeps of
%% 10 ms (timer:sleep) and records how late each one woke.  Result: p99
%% lateness in ns (nearest rank: of 50 samples, the largest).
wake_latency() ->
    {_, Stop} = start_spinners(2 * erlang:system_info(schedulers_online)),
    Self = self(),
    Sleep = ?WAKE_SLEEP_MS * 1000000,
    spawn_link(fun() ->
                       Late = [begin
                                   T0 = now_ns(),
                                   timer:sleep(?WAKE_SLEEP_MS),
                                   El = now_ns() - T0,
                                   El >= Sleep orelse error(woke_early),
                                   El - Sleep
                               end || _ <- lists:seq(1, ?WAKE_N)],
                       Self ! {late, Late}
               end),
    Late = receive {late, L} -> lists:sort(L) end,
    Stop(),
    Rank = fun(Pct) -> lists:nth((?WAKE_N * Pct + 99) div 100, Late) end,
    Note = lists:flatten(io_lib:format("~.3f/~.3f",
                                       [Rank(50) / 1.0e6, Rank(99) / 1.0e6])),
    {float(Rank(99)), Note}.
