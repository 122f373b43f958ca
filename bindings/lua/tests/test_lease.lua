-- Bounded-load leases in the Lua binding (ring:acquire, ring:release,
-- ring:with_lease), under plain LuaJIT against real rings and their load boards:
-- the lease is released on every path, errors included, with exact codes. Run by
-- ctest (lua_lease) with LUA_PATH, SHMRING_LIBRARY and RINGCTL set.

local ffi = require "ffi"
local shmring = require "shmring"

ffi.cdef [[ int getpid(void); unsigned int getgid(void); ]]

local RINGCTL = assert(os.getenv("RINGCTL"), "RINGCTL must name the ringctl binary")
local PREFIX = "lua-lease-" .. ffi.C.getpid()

local passed = 0

local function eq(actual, expected, what)
    if actual ~= expected then
        error(string.format("%s: expected %s, got %s", what, tostring(expected),
            tostring(actual)), 2)
    end
end

local function same_error(what, expected_code, message, value, err, code)
    eq(value, nil, what .. " value")
    eq(err, message or shmring.strerror(expected_code), what .. " message")
    eq(code, expected_code, what .. " code")
end

local function shell_quote(s)
    return "'" .. s:gsub("'", "'\\''") .. "'"
end

local function ringctl(ring, args)
    local command = shell_quote(RINGCTL) .. " -r " .. ring .. " " .. args
    -- LuaJIT's pipe:close() says true whatever the exit status: the shell reports
    -- it on a last line of its own.
    local pipe = assert(io.popen(command .. " 2>&1; echo \"ringctl-status=$?\""))
    local output = pipe:read("*a")
    pipe:close()
    local status = output:match("ringctl%-status=(%d+)\n$")
    output = output:gsub("ringctl%-status=%d+\n$", "")
    if status ~= "0" then
        error("ringctl " .. args .. " failed (" .. tostring(status) .. "): " .. output, 2)
    end
    return output
end

-- What `ringctl show` says of the board: the ring's in-flight total and, by node
-- name, {in_flight =, capacity =} (capacity nil without a balance factor: "-").
local function board(ring)
    local shown = ringctl(ring, "show")
    local total = tonumber(shown:match("load board:[^\n]*, (%d+) in flight"))
    local nodes = {}
    for name, in_flight, capacity in shown:gmatch(
        "\n%d+%s+(%S+)%s+%S+%s+%d+%s+%S+%s+%S+%s+(%d+)%s+(%S+)") do
        nodes[name] = {in_flight = tonumber(in_flight), capacity = tonumber(capacity)}
    end
    return total, nodes
end

local rings = {}

-- A ring of three nodes of weight 1; with a board for this process's group and
-- balance factor FACTOR (a string) unless FACTOR is nil.
local function make_ring(suffix, factor)
    local name = PREFIX .. "-" .. suffix
    rings[#rings + 1] = name
    if factor then
        ringctl(name, "init --workers-group " .. ffi.C.getgid() .. " --balance-factor "
            .. factor)
    else
        ringctl(name, "init")
    end
    for i, node in ipairs({"a", "b", "c"}) do
        ringctl(name, "add " .. node .. " 10.0.0." .. i .. ":11211")
    end
    return name, assert(shmring.open(name))
end

local function test(name, body)
    body()
    passed = passed + 1
    io.write("ok ", passed, " - ", name, "\n")
end

local function main()
    test("codes", function()
        eq(shmring.ELEASE, -1042, "ELEASE")
        eq(shmring.strerror(shmring.ELEASE),
            "shmring: lease already released, or never acquired", "ELEASE message")
    end)

    local name, ring = make_ring("bounded", "1.25")

    test("acquire counts, release uncounts, once", function()
        local lease = assert(ring:acquire("user:42"))
        eq(lease.node, ring:lookup("user:42"), "leased node")
        eq(lease.candidates, 1, "candidates")
        eq(lease.counted, true, "counted")
        local total, nodes = board(name)
        eq(total, 1, "in flight")
        eq(nodes[lease.node.name].in_flight, 1, "node in flight")
        eq(ring:release(lease), true, "release")
        eq(board(name), 0, "in flight after release")
        same_error("second release", shmring.ELEASE, nil, ring:release(lease))
        eq(board(name), 0, "in flight after second release")
        eq(tostring(lease):match("^shmring.lease %(") ~= nil, true, "tostring")
    end)

    test("candidates by hand", function()
        -- With N in flight every capacity is ceil(1.25 (N + 1) / 3): 1 1 2 2 3 3 3 4
        -- for N = 0..7, so one key takes its candidates in the order 0 1 0 1 0 1 2 0.
        local order = assert(ring:lookup_n("hot", 3))
        local leases = {}
        for i = 1, 8 do
            leases[i] = assert(ring:acquire("hot"))
        end
        local expected_node = {1, 2, 1, 2, 1, 2, 3, 1}
        local expected_candidates = {1, 2, 1, 2, 1, 2, 3, 1}
        for i, lease in ipairs(leases) do
            eq(lease.node.name, order[expected_node[i]].name, "lease " .. i .. " node")
            eq(lease.candidates, expected_candidates[i], "lease " .. i .. " candidates")
        end
        local total, nodes = board(name)
        eq(total, 8, "in flight")
        eq(nodes[order[1].name].in_flight, 4, "first candidate's count")
        eq(nodes[order[2].name].in_flight, 3, "second candidate's count")
        eq(nodes[order[3].name].in_flight, 1, "third candidate's count")
        eq(nodes[order[1].name].capacity, 4, "capacity ceil(1.25 x 9 / 3)")
        for _, lease in ipairs(leases) do
            eq(ring:release(lease), true, "release")
        end
        eq(board(name), 0, "in flight after releases")
    end)

    test("with_lease returns, and releases", function()
        local seen
        local a, b = ring:with_lease("user:7", function(node, lease, extra)
            seen = board(name)
            eq(lease.node, node, "node argument")
            return node.name, extra
        end, "extra")
        eq(seen, 1, "in flight inside")
        eq(a, ring:lookup("user:7").name, "first result")
        eq(b, "extra", "second result")
        eq(board(name), 0, "in flight after")
    end)

    test("with_lease releases on an error, and raises it again as it was", function()
        local raised = {reason = "the backend failed"}
        local ok, err = pcall(ring.with_lease, ring, "user:7", function()
            error(raised)
        end)
        eq(ok, false, "raised")
        eq(err, raised, "the same error value")
        eq(board(name), 0, "in flight after an error value")
        ok, err = pcall(ring.with_lease, ring, "user:7", function()
            local missing
            return missing.field
        end)
        eq(ok, false, "raised")
        eq(err:match("attempt to index") ~= nil, true, "a runtime error: " .. err)
        eq(board(name), 0, "in flight after a runtime error")
        -- A function that releases its lease itself: with_lease's release finds it
        -- released and leaves it.
        eq(ring:with_lease("user:7", function(_, lease)
            eq(ring:release(lease), true, "release inside")
            return "done"
        end), "done", "result")
        eq(board(name), 0, "in flight after releasing inside")
        assert(not pcall(ring.with_lease, ring, "user:7", "not a function"))
    end)

    test("a lost lease is released by the garbage collector", function()
        local lease = assert(ring:acquire("lost"))
        eq(lease.counted, true, "counted")
        eq(board(name), 1, "in flight")
        lease = nil
        collectgarbage()
        collectgarbage()
        eq(board(name), 0, "in flight after collection")
    end)

    test("a ring dropped with its lease held is collected, and the lease comes back",
        function()
        local weak = setmetatable({}, {__mode = "k"})
        local dropped = assert(shmring.open(name))
        local lease = assert(dropped:acquire("k"))
        weak[dropped], weak[lease] = true, true
        eq(board(name), 1, "in flight")
        dropped, lease = nil, nil
        for _ = 1, 4 do
            collectgarbage()
        end
        eq(next(weak), nil, "the ring and the lease were collected")
        eq(board(name), 0, "in flight after collection")
    end)

    test("a process that exits holding leases of several handles", function()
        -- At exit LuaJIT runs every finalizer in no set order: a lease's must not
        -- call into a handle whose own finalizer closed it first.
        local script = string.format([[
            local shmring = require "shmring"
            local rings, leases = {}, {}
            for i = 1, 5 do rings[i] = assert(shmring.open(%q)) end
            for i = 1, 200 do leases[i] = assert(rings[i %% 5 + 1]:acquire("k" .. i)) end
            io.write("held ", #leases, "\n")
        ]], name)
        local luajit = arg[-1]
        local pipe = assert(io.popen(shell_quote(luajit) .. " -e " .. shell_quote(script)
            .. " 2>&1; echo \"status=$?\""))
        local output = pipe:read("*a")
        pipe:close()
        eq(output, "held 200\nstatus=0\n", "the child's output and exit status")
    end)

    test("argument errors raise", function()
        local lease = assert(ring:acquire("k"))
        assert(not pcall(ring.acquire, ring, nil), "nil key")
        assert(not pcall(ring.acquire, ring, {}), "table key")
        assert(not pcall(ring.release, ring, nil), "nil lease")
        assert(not pcall(ring.release, ring, {node = lease.node}), "a table")
        local other = assert(shmring.open(name))
        local ok, err = pcall(other.release, other, lease)
        eq(ok, false, "another handle's lease")
        eq(err:match("another ring handle") ~= nil, true, "message: " .. err)
        eq(board(name), 1, "still held")
        eq(ring:release(lease), true, "release")
        other:close()
        -- A number key is its decimal string, as for lookup.
        lease = assert(ring:acquire(42))
        eq(lease.node, ring:lookup("42"), "number key")
        eq(ring:release(lease), true, "release")
    end)

    test("closing gives every lease back", function()
        local closing = assert(shmring.open(name))
        local lease = assert(closing:acquire("k"))
        eq(board(name), 1, "in flight")
        closing:close()
        eq(board(name), 0, "in flight after close")
        -- Closing gave the lease back: its first release says so quietly, a second
        -- is ELEASE, as in the other bindings.
        eq(closing:release(lease), true, "first release after close")
        same_error("second release after close", shmring.ELEASE, nil,
            closing:release(lease))
        local released = assert(shmring.open(name))
        local before = assert(released:acquire("k"))
        eq(released:release(before), true, "release before close")
        released:close()
        same_error("release after close of a released lease", shmring.ELEASE, nil,
            released:release(before))
        same_error("acquire after close", shmring.EINVAL, "shmring: ring is closed",
            closing:acquire("k"))
        lease = nil
        collectgarbage()
        eq(board(name), 0, "in flight after collection")
    end)

    test("all down, and empty", function()
        for _, node in ipairs({"a", "b", "c"}) do
            ringctl(name, "down " .. node)
        end
        same_error("all down", shmring.EALLDOWN, nil, ring:acquire("k"))
        eq(board(name), 0, "in flight")
        local empty_name = PREFIX .. "-empty"
        rings[#rings + 1] = empty_name
        ringctl(empty_name, "init --workers-group " .. ffi.C.getgid()
            .. " --balance-factor 2")
        local empty = assert(shmring.open(empty_name))
        same_error("empty", shmring.EEMPTY, nil, empty:acquire("k"))
        empty:close()
    end)

    local unbounded_name, unbounded = make_ring("unbounded", "0")

    test("a board without a balance factor counts, and bounds nothing", function()
        local order = assert(unbounded:lookup_n("hot", 3))
        local leases = {}
        for i = 1, 8 do
            leases[i] = assert(unbounded:acquire("hot"))
            eq(leases[i].node.name, order[1].name, "lease " .. i .. " node")
            eq(leases[i].candidates, 1, "lease " .. i .. " candidates")
            eq(leases[i].counted, true, "lease " .. i .. " counted")
        end
        local total, nodes = board(unbounded_name)
        eq(total, 8, "in flight")
        eq(nodes[order[1].name].in_flight, 8, "first candidate's count")
        eq(nodes[order[1].name].capacity, nil, "no capacity")
        for _, lease in ipairs(leases) do
            eq(unbounded:release(lease), true, "release")
        end
        eq(board(unbounded_name), 0, "in flight after releases")
    end)

    local plain_name, plain = make_ring("plain", nil)

    test("no board: plain lookups, not counted, released once", function()
        for i = 1, 100 do
            local key = "key-" .. i
            local lease = assert(plain:acquire(key))
            eq(lease.node, plain:lookup(key), key)
            eq(lease.counted, false, "counted")
            eq(lease.candidates, 1, "candidates")
            eq(plain:release(lease), true, "release")
            same_error("second release", shmring.ELEASE, nil, plain:release(lease))
        end
        eq(ringctl(plain_name, "show"):match("load board:"), nil, "no board shown")
    end)

    ring:close()
    unbounded:close()
    plain:close()
end

local ok, err = xpcall(main, debug.traceback)
for _, ring in ipairs(rings) do
    pcall(ringctl, ring, "destroy")
end
if not ok then
    io.stderr:write("not ok - ", tostring(err), "\n")
    os.exit(1)
end
io.write("1..", passed, "\n")
