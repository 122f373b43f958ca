-- The Lua binding under plain LuaJIT, through real shared memory: every call, its
-- exact errors, and a handle following the versions that ringctl publishes. Run by
-- ctest (lua_shmring) with LUA_PATH, SHMRING_LIBRARY, SHMRING_VERSION (CMake's project
-- version) and RINGCTL set.

local ffi = require "ffi"
local shmring = require "shmring"

ffi.cdef [[ int getpid(void); ]]

local RINGCTL = assert(os.getenv("RINGCTL"), "RINGCTL must name the ringctl binary")
local SHMRING_LIBRARY = assert(os.getenv("SHMRING_LIBRARY"), "SHMRING_LIBRARY must name libshmring")
local SHMRING_VERSION = assert(os.getenv("SHMRING_VERSION"), "SHMRING_VERSION must be CMake's version")
local RING = "lua-test-" .. ffi.C.getpid()

local passed = 0

local function eq(actual, expected, what)
    if actual ~= expected then
        error(string.format("%s: expected %s, got %s", what, tostring(expected),
            tostring(actual)), 2)
    end
end

local function same_error(what, expected_code, value, err, code)
    eq(value, nil, what .. " value")
    eq(err, shmring.strerror(expected_code), what .. " message")
    eq(code, expected_code, what .. " code")
end

-- A failed open: nil, the message naming the ring or the directory, the code.
local function open_error(what, expected_code, message, value, err, code)
    eq(value, nil, what .. " value")
    eq(err, message, what .. " message")
    eq(code, expected_code, what .. " code")
end

local function closed(what, value, err, code)
    eq(value, nil, what .. " value")
    eq(err, "shmring: ring is closed", what .. " message")
    eq(code, shmring.EINVAL, what .. " code")
end

local function shell_quote(s)
    return "'" .. s:gsub("'", "'\\''") .. "'"
end

local function ringctl(args, ring)
    local command = shell_quote(RINGCTL) .. " -r " .. (ring or RING) .. " " .. args
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

-- What ringctl answers for KEYS: {key = {name, address, name2, address2, ...}}.
local function ringctl_lookup(keys, n)
    local answers = {}
    local chunk = 200
    for first = 1, #keys, chunk do
        local args = {n and ("lookup -n " .. n) or "lookup"}
        for i = first, math.min(first + chunk - 1, #keys) do
            args[#args + 1] = keys[i]
        end
        for line in ringctl(table.concat(args, " ")):gmatch("[^\n]+") do
            local fields = {}
            for field in line:gmatch("[^\t]+") do
                fields[#fields + 1] = field
            end
            answers[table.remove(fields, 1)] = fields
        end
    end
    return answers
end

local function test(name, body)
    body()
    passed = passed + 1
    io.write("ok ", passed, " - ", name, "\n")
end

local keys = {}
for i = 1, 500 do
    keys[i] = "key-" .. i
end

local function check_against_ringctl(ring, what)
    local answers = ringctl_lookup(keys)
    local ids = assert(ring:lookup_ids(keys))
    for i, key in ipairs(keys) do
        local node, err = ring:lookup(key)
        assert(node, err)
        eq(node.name, answers[key][1], what .. ": lookup(" .. key .. ").name")
        eq(node.address, answers[key][2], what .. ": lookup(" .. key .. ").address")
        eq(ring:lookup_id(key), node.id, what .. ": lookup_id(" .. key .. ")")
        eq(ids[i], node.id, what .. ": lookup_ids[" .. i .. "]")
    end
end

local function main()
    test("module", function()
        -- The library's own version call, and the version CMake built it as.
        eq(shmring._VERSION, ffi.string(ffi.load(SHMRING_LIBRARY).shmring_version()),
            "_VERSION")
        eq(shmring._VERSION, SHMRING_VERSION, "_VERSION")
        eq(shmring.ENOENT, -2, "ENOENT")
        eq(shmring.EINVAL, -22, "EINVAL")
        eq(shmring.EEMPTY, -1000, "EEMPTY")
        eq(shmring.EALLDOWN, -1001, "EALLDOWN")
        eq(shmring.ENODE, -1015, "ENODE")
        eq(shmring.EBADRING, -1020, "EBADRING")
        eq(shmring.EBASEDIR, -1029, "EBASEDIR")
        eq(shmring.EBADDIR, -1031, "EBADDIR")
        eq(shmring.ENODIR, -1032, "ENODIR")
        eq(shmring.ENOTRINGDIR, -1033, "ENOTRINGDIR")
        eq(shmring.EBASEOWNER, -1034, "EBASEOWNER")
        eq(shmring.ERENUMBER, -1037, "ERENUMBER")
        eq(shmring.ENODOWN, -1040, "ENODOWN")
        eq(shmring.EUNRESOLVED, -1041, "EUNRESOLVED")
        eq(shmring.EBADMAGIC, -1002, "EBADMAGIC")
        eq(shmring.EINUSE, -1030, "EINUSE")
        -- Every code of the header, each under its name (shmring_err_name()).
        local code_count = 0
        for name, value in pairs(shmring) do
            if type(value) == "number" and name:match("^E[A-Z0-9]+$") then
                code_count = code_count + 1
                eq(ffi.string(ffi.load(SHMRING_LIBRARY).shmring_err_name(value)),
                    "SHMRING_" .. name, "err_name(" .. name .. ")")
            end
        end
        eq(code_count, 55, "codes")
        eq(shmring.LOOKUP_N_MAX, 64, "LOOKUP_N_MAX")
        eq(shmring.strerror(-1000), "shmring: ring has no nodes", "strerror")
        eq(shmring.strerror(-2), "shmring: no such ring", "strerror")
    end)

    test("open errors", function()
        open_error("missing ring", shmring.ENOENT,
            "shmring: ring '" .. RING .. "': no such ring", shmring.open(RING))
        open_error("bad name", shmring.EBADRING, "shmring: ring 'a/b': invalid ring name",
            shmring.open("a/b"))
        open_error("empty name", shmring.EBADRING, "shmring: ring '': invalid ring name",
            shmring.open(""))
        open_error("dot", shmring.EBADRING, "shmring: ring '.': invalid ring name",
            shmring.open("."))
        local long = "/" .. string.rep("d", 1100)
        open_error("long directory", shmring.EBADDIR,
            "shmring: directory '" .. long .. "': ring directory must be an absolute "
                .. "path of at most 1024 bytes",
            shmring.open(RING, {directory = long}))
        open_error("relative directory", shmring.EBADDIR,
            "shmring: directory 'rel/x': ring directory must be an absolute path of "
                .. "at most 1024 bytes",
            shmring.open(RING, {directory = "rel/x"}))
        open_error("missing directory", shmring.ENODIR,
            "shmring: directory '/nonexistent-shmring-dir': no such ring directory",
            shmring.open(RING, {directory = "/nonexistent-shmring-dir"}))
        open_error("kernel filesystem", shmring.ENOTRINGDIR,
            "shmring: directory '/proc': not a ring directory (a kernel filesystem "
                .. "such as /proc)",
            shmring.open(RING, {directory = "/proc"}))
        open_error("a file", -20,
            "shmring: directory '/etc/passwd': Not a directory",
            shmring.open(RING, {directory = "/etc/passwd"}))
        assert(not pcall(shmring.open, 42), "a number as the ring name raises")
        assert(not pcall(shmring.open, RING, "x"), "options must be a table")
        assert(not pcall(shmring.open, RING, {directory = 1}), "directory type")
        assert(not pcall(shmring.open, RING, {trusted_owner = -1}), "owner range")
        assert(not pcall(shmring.open, RING, {trusted_owner = 1.5}), "owner integer")
    end)

    ringctl("init")
    local ring = assert(shmring.open(RING))

    test("empty ring", function()
        eq(ring:generation(), 1, "generation")
        same_error("lookup", shmring.EEMPTY, ring:lookup("k"))
        same_error("lookup_id", shmring.EEMPTY, ring:lookup_id("k"))
        same_error("lookup_ids", shmring.EEMPTY, ring:lookup_ids({"a", "b"}))
        same_error("lookup_ids of none", shmring.EEMPTY, ring:lookup_ids({}))
        same_error("lookup_n", shmring.EEMPTY, ring:lookup_n("k", 2))
        same_error("node", shmring.ENODE, ring:node(0))
        local all = assert(ring:nodes())
        eq(all.generation, 1, "nodes().generation")
        eq(#all.nodes, 0, "nodes() count")
        eq(type(ring:fingerprint()), "string", "fingerprint of an empty version")
        eq(ring:fingerprint(), all.fingerprint, "fingerprint")
    end)

    ringctl("add alpha 10.0.0.1:11211")
    ringctl("add beta 10.0.0.2:11211 --weight 2")
    ringctl("add gamma [2001:db8::3]:6379")

    test("follows new versions: three nodes", function()
        eq(ring:generation(), 4, "generation after three adds")
        check_against_ringctl(ring, "three nodes")
    end)

    test("lookup_n", function()
        local answers = ringctl_lookup(keys, 3)
        for _, key in ipairs(keys) do
            local list = assert(ring:lookup_n(key, 3))
            eq(#list, 3, "lookup_n count")
            for i = 1, 3 do
                eq(list[i].name, answers[key][2 * i - 1], "lookup_n name " .. i)
                eq(list[i].address, answers[key][2 * i], "lookup_n address " .. i)
            end
            eq(list[1].id, ring:lookup_id(key), "lookup_n first")
        end
        eq(#assert(ring:lookup_n("k", 1)), 1, "n = 1")
        eq(#assert(ring:lookup_n("k", 10)), 3, "fewer nodes than n")
        eq(#assert(ring:lookup_n("k", 1000)), 3, "n above LOOKUP_N_MAX")
        same_error("n = 0", shmring.EINVAL, ring:lookup_n("k", 0))
        assert(not pcall(ring.lookup_n, ring, "k", -1), "negative n raises")
        assert(not pcall(ring.lookup_n, ring, "k", 1.5), "fractional n raises")
        assert(not pcall(ring.lookup_n, ring, "k"), "missing n raises")
    end)

    test("node, nodes, fingerprint", function()
        local shown = ringctl("show")
        local fingerprint = shown:match("fingerprint:%s+(%x+)")
        eq(ring:fingerprint(), fingerprint, "fingerprint")
        local all = assert(ring:nodes())
        eq(all.generation, 4, "nodes().generation")
        eq(all.fingerprint, fingerprint, "nodes().fingerprint")
        eq(#all.nodes, 3, "nodes() count")
        local expected = {
            alpha = {"10.0.0.1:11211", 1},
            beta = {"10.0.0.2:11211", 2},
            gamma = {"[2001:db8::3]:6379", 1},
        }
        for _, node in ipairs(all.nodes) do
            eq(node.address, expected[node.name][1], node.name .. " address")
            eq(node.weight, expected[node.name][2], node.name .. " weight")
            local same = assert(ring:node(node.id))
            eq(same.name, node.name, "node(id).name")
            eq(same.address, node.address, "node(id).address")
            eq(same.weight, node.weight, "node(id).weight")
            eq(same.id, node.id, "node(id).id")
        end
        same_error("node(99)", shmring.ENODE, ring:node(99))
        same_error("node(-1)", shmring.ENODE, ring:node(-1))
        same_error("node(1.5)", shmring.ENODE, ring:node(1.5))
        same_error("node('x')", shmring.ENODE, ring:node("x"))
    end)

    test("status", function()
        local fingerprint = ringctl("show"):match("fingerprint:%s+(%x+)")
        local status = assert(ring:status())
        eq(status.present, true, "present")
        eq(status.destroyed, false, "destroyed")
        eq(status.generation, 4, "generation")
        eq(status.fingerprint, fingerprint, "fingerprint")
        eq(status.error, 0, "error")
        eq(status.failed_format, 0, "failed_format")
    end)

    test("one node table per node and version", function()
        local by_id = {}
        for _, key in ipairs(keys) do
            local node = assert(ring:lookup(key))
            by_id[node.id] = by_id[node.id] or node
            assert(rawequal(by_id[node.id], node), "the same table for node " .. node.id)
        end
        eq(by_id[1].weight, 2, "beta's weight")
        ringctl("weight beta 3")
        local beta
        for _, key in ipairs(keys) do
            local node = assert(ring:lookup(key))
            if node.id == 1 then
                beta = node
            end
        end
        assert(not rawequal(beta, by_id[1]), "a new version, a new table")
        eq(beta.weight, 3, "the new version's weight")
        eq(beta.name, "beta", "the new version's name")
        ringctl("weight beta 2")
        check_against_ringctl(ring, "weights back")
        eq(ring:generation(), 6, "generation after two weight changes")
    end)

    test("keys", function()
        local binary = "a\0b\255"
        eq(ring:lookup(binary).id, ring:lookup_id(binary), "binary key")
        eq(ring:lookup("").id, ring:lookup_id(""), "empty key")
    end)
end

local ok, err = xpcall(function()
    main()
    local ring = assert(shmring.open(RING, {directory = "/dev/shm", trusted_owner = 0}))

    test("serialized and thread-safe handles answer alike", function()
        local shared = assert(shmring.open(RING, {serialized = false}))
        for i = 1, 200 do
            eq(shared:lookup_id("k" .. i), ring:lookup_id("k" .. i), "key k" .. i)
        end
        eq(shared:generation(), ring:generation(), "generation")
        -- A thread-safe handle's lookups return one table per node and version too.
        local first, second = assert(shared:lookup("k")), assert(shared:lookup("k"))
        assert(rawequal(first, second), "the same table")
        eq(first.name, ring:lookup("k").name, "the same node as the serialized handle's")
        shared:close()
        assert(not pcall(shmring.open, RING, {serialized = 1}),
            "a non-boolean serialized raises")
        eq(shmring.EINUSE, -1030, "EINUSE")
    end)

    test("number keys, lookup_ids out table", function()
        eq(ring:lookup_id(12345), ring:lookup_id("12345"), "number key")
        local input = {"1", 2, "3"}
        local ids = assert(ring:lookup_ids(input))
        eq(ids[2], ring:lookup_id("2"), "number key in a batch")
        eq(input[2], 2, "the keys are left as they were")
        local out = {7, 7, 7, 7, 7}
        local same = assert(ring:lookup_ids({"a", "b"}, out))
        eq(same, out, "out table returned")
        eq(#out, 2, "out table trimmed")
        eq(out[1], ring:lookup_id("a"), "out[1]")
        assert(not pcall(ring.lookup_id, ring, {}), "a table key raises")
        assert(not pcall(ring.lookup_id, ring, nil), "a nil key raises")
        assert(not pcall(ring.lookup_ids, ring, "a"), "keys must be a table")
        local many = {}
        for i = 1, 3000 do
            many[i] = "batch-" .. i
        end
        local batch = assert(ring:lookup_ids(many))
        for i = 1, 3000, 97 do
            eq(batch[i], ring:lookup_id(many[i]), "large batch " .. i)
        end
    end)

    ringctl("add delta 10.0.0.4:11211")
    test("follows add on the next call", function()
        eq(ring:lookup_id("x") ~= nil, true, "lookup after add")
        eq(ring:generation(), 7, "generation after add")
        check_against_ringctl(ring, "after add")
        local found = false
        for _, node in ipairs(assert(ring:nodes()).nodes) do
            found = found or node.name == "delta"
        end
        assert(found, "nodes() lists delta")
    end)

    ringctl("remove alpha")
    test("follows remove on the next call", function()
        check_against_ringctl(ring, "after remove")
        eq(ring:generation(), 8, "generation after remove")
        for _, node in ipairs(assert(ring:nodes()).nodes) do
            assert(node.name ~= "alpha", "alpha is gone")
        end
        same_error("node(alpha's id)", shmring.ENODE, ring:node(0))
    end)

    ringctl("down beta")
    ringctl("down gamma")
    ringctl("down delta")
    test("all nodes down", function()
        same_error("lookup", shmring.EALLDOWN, ring:lookup("k"))
        same_error("lookup_id", shmring.EALLDOWN, ring:lookup_id("k"))
        same_error("lookup_ids", shmring.EALLDOWN, ring:lookup_ids({"k"}))
        same_error("lookup_n", shmring.EALLDOWN, ring:lookup_n("k", 2))
        eq(#assert(ring:nodes()).nodes, 3, "down nodes stay in the set")
        eq(assert(ring:node(1)).name, "beta", "node() of a down node")
    end)

    ringctl("up gamma")
    test("up again", function()
        eq(ring:lookup("k").name, "gamma", "the one up node")
        eq(ring:generation(), 12, "generation")
    end)

    local last_node = ring:lookup("k")
    local last_fingerprint = ring:fingerprint()
    ringctl("destroy")
    test("destroyed ring: the handle keeps its last version", function()
        local status = assert(ring:status())
        eq(status.present, false, "present")
        eq(status.destroyed, true, "destroyed")
        eq(status.generation, 12, "generation")
        eq(status.fingerprint, last_fingerprint, "fingerprint")
        eq(status.error, shmring.ENOENT, "error")
        assert(rawequal(ring:lookup("k"), last_node), "the same node table")
        eq(ring:lookup("k").name, "gamma", "lookup after destroy")
        open_error("open after destroy", shmring.ENOENT,
            "shmring: ring '" .. RING .. "': no such ring", shmring.open(RING))
    end)

    ringctl("init")
    ringctl("add omega 10.0.0.24:11211")
    test("a ring made again under the name is followed", function()
        -- Within the library's retry interval (100 ms); bounded at 10 s.
        local status
        for _ = 1, 200 do
            status = assert(ring:status())
            if not status.destroyed then
                break
            end
            os.execute("sleep 0.05")
        end
        eq(status.present, true, "present")
        eq(status.destroyed, false, "destroyed")
        eq(status.generation, 2, "generation")
        eq(status.fingerprint, ringctl("show"):match("fingerprint:%s+(%x+)"), "fingerprint")
        eq(status.error, 0, "error")
        eq(ring:lookup("k").name, "omega", "lookup")
        ringctl("destroy")
    end)

    test("close", function()
        eq(ring:close(), true, "close")
        eq(ring:close(), true, "close twice")
        closed("lookup", ring:lookup("k"))
        closed("lookup_id", ring:lookup_id("k"))
        closed("lookup_ids", ring:lookup_ids({"k"}))
        closed("lookup_n", ring:lookup_n("k", 1))
        closed("node", ring:node(1))
        closed("nodes", ring:nodes())
        closed("generation", ring:generation())
        closed("fingerprint", ring:fingerprint())
        closed("status", ring:status())
        eq(tostring(ring), "shmring.ring (closed)", "tostring")
    end)

    test("names with a NUL and keys behind metamethods", function()
        ringctl("init")
        ringctl("add a 10.0.0.1:1")
        ringctl("add b 10.0.0.2:1")
        local handle, err, code = shmring.open(RING .. "\0x")
        eq(handle, nil, "a name with a NUL opens nothing")
        eq(code, shmring.EBADRING, "its code")
        handle, err, code = shmring.open(RING, {directory = "/dev/shm\0/elsewhere"})
        eq(handle, nil, "a directory with a NUL opens nothing")
        eq(code, shmring.EINVAL, "its code")
        local ring = assert(shmring.open(RING))
        local keys = {}
        for i = 1, 100 do
            keys[i] = "key-" .. i
        end
        local expected = assert(ring:lookup_ids(keys))
        -- Keys an __index would make (and could let be collected, or use to close
        -- the ring or re-enter lookup_ids) are not read: only the table's own are.
        local calls = 0
        local lazy = setmetatable({}, {__index = function(_, i)
            calls = calls + 1
            ring:close()
            return "key-" .. i
        end})
        local ok_call = pcall(ring.lookup_ids, ring, lazy)
        eq(calls, 0, "no __index ran")
        eq(ok_call, true, "an empty table is an empty batch")
        local own = setmetatable({}, {__index = function() error("not called") end})
        for i = 1, 100 do
            own[i] = keys[i]
        end
        local got = assert(ring:lookup_ids(own))
        for i = 1, 100 do
            eq(got[i], expected[i], "id of key " .. i)
        end
        ring:close()
        ringctl("destroy")
    end)

    test("node tables of large and sparse ids", function()
        local file = os.tmpname()
        local f = assert(io.open(file, "w"))
        f:write('{"nodes": [{"name": "n0", "address": "a0", "id": 3},',
            ' {"name": "n1", "address": "a1", "id": 65535},',
            ' {"name": "n2", "address": "a2", "id": 65536},',
            ' {"name": "n3", "address": "a3", "id": 4294967294}]}')
        f:close()
        ringctl("load " .. file)
        os.remove(file)
        local ring = assert(shmring.open(RING))
        local answers = ringctl_lookup(keys)
        local seen, count = {}, 0
        for _, key in ipairs(keys) do
            local node = assert(ring:lookup(key))
            eq(node.name, answers[key][1], "lookup(" .. key .. ").name")
            if seen[node.id] == nil then
                seen[node.id] = node
                count = count + 1
            end
            assert(rawequal(seen[node.id], node), "the same table for id " .. node.id)
        end
        eq(count, 4, "every node answers some key")
        eq(seen[4294967294].name, "n3", "id 4294967294")
        ring:close()
        ringctl("destroy")
    end)

    test("handles are collected", function()
        ringctl("init")
        ringctl("add solo 10.0.0.9:1")
        for _ = 1, 2000 do
            local handle = assert(shmring.open(RING))
            eq(handle:lookup("k").name, "solo", "lookup")
        end
        collectgarbage()
        collectgarbage()
    end)
end, debug.traceback)

-- Remove the ring whatever happened (it may already be gone).
os.execute(shell_quote(RINGCTL) .. " -r " .. RING .. " destroy >/dev/null 2>&1")
if not ok then
    io.stderr:write("not ok - ", tostring(err), "\n")
    os.exit(1)
end
io.write("1..", passed, "\n")
