# frozen_string_literal: true

module Shmring
  # The gem's version: the project's, CMake's project(VERSION). ctest ruby_version
  # fails when the two differ.
  VERSION = "0.4.0"
end
