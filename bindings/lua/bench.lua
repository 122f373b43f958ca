-- bench.lua: the cost of ring:lookup_id() from LuaJIT next to the same
-- shmring_lookup_id() call from C, and of ring:lookup(), which returns a node table,
-- next to ring:lookup_id(), in one run, in one process, on one handle, over the same
-- keys (targets: Lua within 1.3x of C; lookup() within 1.3x of lookup_id(), since
-- it returns the table made at the first lookup in the version), and of a
-- bounded-load lease (ring:acquire() then ring:release()) next to ring:lookup_id().
--
--   luajit bench.lua [--quick] [--cpu-time] [--nodes N[,N...]] [--keys K]
--                    [--passes P]
--
-- Needs LUA_PATH to find shmring.lua, SHMRING_LIBRARY (or an installed libshmring),
-- RINGCTL (ringctl, to publish the rings) and SHMRING_LUA_BENCH_C (the C loop,
-- shmring_lua_bench.so from the build). For each ring size (default 10, 100, 1,000
-- and 10,000 nodes) it publishes a ring under a name with this process's id and
-- looks up K distinct keys (default 100,000, 8-40 bytes) with each contender below.
--
-- The contenders take turns by chunks of about 1,000 keys, in an order in which each
-- follows every other equally often, each contender walking the chunks from its own
-- place in the key stream, so that each looks up every key once per pass. One
-- after another by whole streams instead, a contender that follows one that sweeps
-- other memory starts with cold caches and comes out slower than one doing more
-- work, and a slow phase of a shared machine falls on one contender only. A
-- contender's time for a pass is the sum over its chunks, by the wall clock or, with
-- --cpu-time, by this thread's CPU time (then the time the scheduler gives other
-- jobs is not counted; what they do to the caches still is); the best of P passes
-- (default 20) is printed:
--   C           lua_bench_lookup_id_loop(): a C loop of shmring_lookup_id()
--   Lua module  ring:lookup_id(key) in a Lua loop
--   Lua node    ring:lookup(key).id in a Lua loop (a node table per key, its id
--               read: the target's row)
--   Lua table   ring:lookup(key) in a Lua loop, the table not read: what the
--               lookup itself costs, without the caller's first read of the table
--   Lua own     own[ring:lookup_id(key)].id: the caller's own table of node tables
--               by id (made from ring:nodes()), read as the node table is: what
--               reaching a node's data from an id costs any Lua program
--   Lua lease   ring:acquire(key) and ring:release(lease) in a Lua loop, on a board
--               for this process's group with balance factor 1.25 (no target: the
--               library's own acquire + release costs about 4 lookups)
-- Debian packages no consistent-hash library for Lua or OpenResty (no
-- lua-resty-balancer), so no third-party ring is measured beside them.
-- Timing is no test: the exit status is 0 whenever the benchmark ran, PASS or MISS.

local ffi = require "ffi"
local shmring = require "shmring"

ffi.cdef [[
    struct shmring_bench_timespec { long tv_sec; long tv_nsec; };
    int clock_gettime(int clock, struct shmring_bench_timespec *ts);
    int getpid(void);
    unsigned int getgid(void);
    int lua_bench_lookup_id_loop(shmring_t *r, const char *const *keys,
                                      const size_t *lens, size_t count, size_t rounds,
                                      uint64_t *checksum);
]]

local options = {keys = 100000, passes = 20}
local sizes = {10, 100, 1000, 10000}
local cpu_time = false
local function usage()
    io.stderr:write("usage: luajit bench.lua [--quick] [--cpu-time] [--nodes N[,N...]]",
        " [--keys K] [--passes P]\n")
    os.exit(2)
end
local i = 1
while i <= #arg do
    local a = arg[i]
    if a == "--quick" then
        options.keys, options.passes, sizes = 2000, 1, {100}
    elseif a == "--cpu-time" then
        cpu_time = true
    elseif a == "--nodes" and arg[i + 1] then
        sizes = {}
        for n in arg[i + 1]:gmatch("[^,]+") do
            sizes[#sizes + 1] = tonumber(n) or usage()
        end
        i = i + 1
    elseif a:match("^%-%-") and options[a:sub(3)] and tonumber(arg[i + 1] or "") then
        options[a:sub(3)] = tonumber(arg[i + 1])
        i = i + 1
    else
        usage()
    end
    i = i + 1
end

local RINGCTL = assert(os.getenv("RINGCTL"), "RINGCTL must name ringctl")
local BENCH_C = assert(os.getenv("SHMRING_LUA_BENCH_C"),
    "SHMRING_LUA_BENCH_C must name shmring_lua_bench.so")
local bench_c = ffi.load(BENCH_C)

local timespec = ffi.new("struct shmring_bench_timespec")
-- CLOCK_THREAD_CPUTIME_ID or CLOCK_MONOTONIC.
local clock = cpu_time and 3 or 1
local function now()
    ffi.C.clock_gettime(clock, timespec)
    return tonumber(timespec.tv_sec) * 1e9 + tonumber(timespec.tv_nsec)
end

local function publish(ring_name, node_count)
    local nodes = {}
    for n = 1, node_count do
        nodes[n] = string.format(
            '{"name": "node-%d", "address": "10.%d.%d.%d:11211", "weight": 1}',
            n, math.floor(n / 65536) % 256, math.floor(n / 256) % 256, n % 256)
    end
    local pipe = assert(io.popen("'" .. RINGCTL .. "' -r " .. ring_name
        .. " load - >/dev/null", "w"))
    pipe:write('{"algorithm": "ring", "hash": "xxh3", "vnodes": 160, "nodes": [',
        table.concat(nodes, ", "), "]}")
    assert(pipe:close(), "ringctl load failed")
    assert(os.execute("'" .. RINGCTL .. "' -r " .. ring_name .. " board " .. ffi.C.getgid()
        .. " --balance-factor 1.25 >/dev/null") == 0, "ringctl board failed")
end

local function destroy(ring_name)
    os.execute("'" .. RINGCTL .. "' -r " .. ring_name .. " destroy >/dev/null 2>&1")
end

-- Distinct keys of 8-40 bytes from a fixed seed, as Lua strings, and the same bytes
-- for the C side (its pointers point into these strings, anchored by KEYS).
local function make_keys(count)
    math.randomseed(11)
    local keys = {}
    local key_ptrs = ffi.new("const char *[?]", count)
    local key_lens = ffi.new("size_t[?]", count)
    for k = 1, count do
        local prefix = "key:" .. k .. ":"
        local key = prefix .. string.rep("x", math.random(math.max(0, 8 - #prefix),
            40 - #prefix))
        keys[k] = key
        key_ptrs[k - 1] = key
        key_lens[k - 1] = #key
    end
    return keys, key_ptrs, key_lens
end

local CHUNK = 1000

-- The contenders on RING, each a function (first, last) that looks up keys FIRST..LAST
-- and returns a value that depends on every answer (checked, so that no contender
-- skips work or routes a key elsewhere).
local function contenders_for(ring, keys, key_ptrs, key_lens)
    local checksum = ffi.new("uint64_t[1]")
    -- The caller's own node tables by id, made as a program would make them.
    local own = {}
    for _, node in ipairs(assert(ring:nodes()).nodes) do
        own[node.id] = {id = node.id, weight = node.weight, name = node.name,
                        address = node.address}
    end
    return {
        {name = "C", run = function(first, last)
            checksum[0] = 0
            local rc = bench_c.lua_bench_lookup_id_loop(ring.handle,
                key_ptrs + (first - 1), key_lens + (first - 1), last - first + 1, 1,
                checksum)
            assert(rc == 0, shmring.strerror(rc))
            return tonumber(checksum[0])
        end},
        {name = "module", run = function(first, last)
            local sum = 0
            for k = first, last do
                sum = sum + ring:lookup_id(keys[k])
            end
            return sum
        end},
        {name = "node", run = function(first, last)
            local sum = 0
            for k = first, last do
                sum = sum + ring:lookup(keys[k]).id
            end
            return sum
        end},
        {name = "table", run = function(first, last)
            local found = 0
            for k = first, last do
                if ring:lookup(keys[k]) then
                    found = found + 1
                end
            end
            return found
        end},
        {name = "own", run = function(first, last)
            local sum = 0
            for k = first, last do
                sum = sum + own[ring:lookup_id(keys[k])].id
            end
            return sum
        end},
        {name = "lease", run = function(first, last)
            local sum = 0
            for k = first, last do
                local lease = ring:acquire(keys[k])
                sum = sum + lease.node.id
                ring:release(lease)
            end
            return sum
        end},
    }
end

-- The turns of N contenders in an order in which each follows every other exactly
-- once: an Eulerian circuit of the complete directed graph on N vertices
-- (Hierholzer's algorithm), N * (N - 1) turns, each contender's N - 1 of them.
local function balanced_order(n)
    if n == 1 then
        return {1}
    end
    local unused = {}
    for from = 1, n do
        unused[from] = {}
        for to = 1, n do
            if to ~= from then
                unused[from][#unused[from] + 1] = to
            end
        end
    end
    local stack, circuit = {1}, {}
    while #stack > 0 do
        local from = stack[#stack]
        if #unused[from] == 0 then
            circuit[#circuit + 1] = table.remove(stack)
        else
            stack[#stack + 1] = table.remove(unused[from], 1)
        end
    end
    -- The circuit starts and ends at 1: as a cycle, one 1 is enough.
    local order = {}
    for t = #circuit - 1, 1, -1 do
        order[#order + 1] = circuit[t]
    end
    return order
end

-- How many chunks of about CHUNK of COUNT keys make whole cycles of the balanced
-- order of N contenders.
local function chunk_count(n, count)
    local turns_per_contender = math.max(1, n - 1)
    return math.ceil(math.ceil(count / CHUNK) / turns_per_contender)
        * turns_per_contender
end

-- Pass number PASS (see the top): the keys cut into chunks of about CHUNK, as many as
-- whole cycles of the balanced order need; every contender runs once over every
-- chunk, the contenders taking turns in that order, starting PASS turns into it (so
-- that none always opens a pass). Each contender walks the chunks from its own,
-- evenly spaced, place in the key stream, so that none runs on keys another has just
-- brought into the caches. Returns the ns per key and the summed values of each.
local function run_pass(contenders, count, pass)
    local n = #contenders
    local order = balanced_order(n)
    local chunks = chunk_count(n, count)
    local elapsed, values, first_chunk, done = {}, {}, {}, {}
    for i = 1, n do
        elapsed[i], values[i], done[i] = 0, 0, 0
        first_chunk[i] = math.floor((i - 1) * chunks / n)
    end
    for turn = 0, n * chunks - 1 do
        local who = order[(turn + pass) % #order + 1]
        local c = (first_chunk[who] + done[who]) % chunks
        done[who] = done[who] + 1
        local first = math.floor(c * count / chunks) + 1
        local last = math.floor((c + 1) * count / chunks)
        if last >= first then
            local start = now()
            local value = contenders[who].run(first, last)
            elapsed[who] = elapsed[who] + (now() - start)
            values[who] = values[who] + value
        end
    end
    for i = 1, n do
        elapsed[i] = elapsed[i] / count
    end
    return elapsed, values
end

local function bench_size(node_count, keys, key_ptrs, key_lens)
    local ring_name = "lua-bench-" .. ffi.C.getpid() .. "-" .. node_count
    publish(ring_name, node_count)
    local ok, err = pcall(function()
        local ring = assert(shmring.open(ring_name))
        local count = #keys
        local expected_sum = 0
        for k = 1, count do
            expected_sum = expected_sum + ring:lookup_id(keys[k])
        end
        -- `ringctl board` sized the board for the ring (docs/bounded-loads.md), so
        -- every lease is counted, whatever the ring's size.
        local probe = assert(ring:acquire("k"))
        assert(probe.counted, "the lease is not counted on the board")
        ring:release(probe)

        local contenders = contenders_for(ring, keys, key_ptrs, key_lens)
        local expected = {C = expected_sum, module = expected_sum, node = expected_sum,
                          table = count, own = expected_sum, lease = expected_sum}
        local best = {}
        for p = 0, options.passes do
            local elapsed, values = run_pass(contenders, count, p)
            for i, contender in ipairs(contenders) do
                assert(values[i] == expected[contender.name],
                    contender.name .. " routed a key elsewhere")
                -- Pass 0 warms up (LuaJIT compiles the loops, the node cache is
                -- made); only the later ones count.
                if p > 0 then
                    best[contender.name] = math.min(best[contender.name] or math.huge,
                        elapsed[i])
                end
            end
        end
        ring:close()

        print(string.format("ring: %d nodes x 160 vnodes (xxh3), %d distinct keys by "
            .. "chunks of about %d in turn, best of %d passes (%s)", node_count, count,
            math.floor(count / chunk_count(#contenders, count) + 0.5), options.passes,
            cpu_time and "thread CPU time" or "wall clock"))
        local function row(label, value, ratio_to, ratio_name, unit)
            local ratio = ratio_to
                and string.format("  %.2fx %s", value / ratio_to, ratio_name) or ""
            print(string.format("  %-41s %7.1f ns/%s%s", label, value, unit or "lookup",
                ratio))
        end
        row("C           shmring_lookup_id()", best.C)
        row("Lua module  ring:lookup_id(key)", best.module, best.C, "C")
        row("Lua node    ring:lookup(key).id", best.node, best.module, "lookup_id")
        row("Lua table   ring:lookup(key), unread", best.table, best.module, "lookup_id")
        row("Lua own     own[ring:lookup_id(key)].id", best.own, best.module, "lookup_id")
        row("Lua lease   ring:acquire + release", best.lease, best.module, "lookup_id",
            "lease ")
        print(string.format("  target: Lua module within 1.3x of C: %s",
            best.module / best.C <= 1.3 and "PASS" or "MISS"))
        print(string.format("  target: lookup within 1.3x of lookup_id: %s",
            best.node / best.module <= 1.3 and "PASS" or "MISS"))
        print(string.format("  lookup(key).id / own[lookup_id(key)].id: %.2fx",
            best.node / best.own))
    end)
    destroy(ring_name)
    if not ok then
        error(err, 0)
    end
end

local function run()
    local keys, key_ptrs, key_lens = make_keys(options.keys)
    for _, node_count in ipairs(sizes) do
        bench_size(node_count, keys, key_ptrs, key_lens)
    end
end

local ok, err = xpcall(run, debug.traceback)
if not ok then
    io.stderr:write(tostring(err), "\n")
    os.exit(1)
end
