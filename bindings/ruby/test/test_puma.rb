# frozen_string_literal: true

# shmring in a real Puma in cluster mode (4 workers): the ring opened in the master
# before the fork (preload_app!) and inherited by every worker; opened by each worker
# (no preload), started before the ring exists; and the README's worker, run as the
# README writes it. Each worker runs one thread and reads requests itself
# (queue_requests false), so that 4 requests held open at once go to 4 workers.
require_relative "server_helper"

class TestPuma < Minitest::Test
  include ServerChecks

  CONFIG = <<~'RUBY'
    workers 4
    threads 1, 1
    queue_requests false
    bind "tcp://127.0.0.1:#{ENV.fetch("SHMRING_TEST_PORT")}"
    worker_timeout 120
    preload_app! if ENV["SHMRING_TEST_OPEN"] == "load"
    on_worker_boot do
      ready = IO.for_fd(Integer(ENV.fetch("SHMRING_TEST_READY_FD")), autoclose: false)
      ready.syswrite("#{Process.pid}\n")
    end
  RUBY

  def start_puma(ctl, open, refresh: false, app: APP)
    File.write(File.join(work_dir, "config.ru"), app)
    File.write(File.join(work_dir, "puma.rb"), CONFIG)
    @server = ServerProcess.new(work_dir)
    port = @server.port
    @server.start([ENV.fetch("SHMRING_PUMA", "puma"), "-C", "puma.rb", "config.ru"],
                  app_env(ctl, open, refresh).merge("SHMRING_TEST_PORT" => port.to_s)) do |fd|
      { "PUMA_INHERIT_0" => "#{fd}:tcp://127.0.0.1:#{port}" }
    end
    @server.wait_for_workers
  end

  def test_ring_opened_before_the_fork
    ctl = ringctl
    ctl.load_nodes(30)
    start_puma(ctl, "load")
    check_follows_changes(ctl, opened_in_master: true)
    measure_switch_stall(ctl, opened_in_master: true)
  end

  def test_ring_opened_by_each_worker_started_before_it_exists_and_refreshed_by_a_thread
    ctl = ringctl
    start_puma(ctl, "request", refresh: true)
    check_ring_lifecycle(ctl)
    measure_switch_stall(ctl, opened_in_master: false, refreshed: true)
  end

  def test_leases_released_on_every_path
    ctl = board_ring(8)
    start_puma(ctl, "request", app: LEASE_APP)
    check_leases(ctl)
  end
end
