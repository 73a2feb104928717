# packaging.cmake - Debian packages of the host build, made by CPack:
#   cpack -G DEB     (in a build tree; or cmake --build build --target package)
# writes gcsnapd_VERSION-1_ARCH.deb (the collector, its systemd unit, its
# commented config under /etc/gcsnap, the gcsnap user and the store in
# /var/lib/gcsnap), gcsnap_*.deb (the command-line tool) and
# gcsnap-agent_*.deb (the agent for the build's architecture).
# Dependencies are computed by dpkg-shlibdeps from the binaries.
#
# The files only a system installation has (the unit, /etc, the Debian
# copyright and changelog) are left out of a plain 'cmake --install'.

set(GS_DEB_DIR "${CMAKE_CURRENT_LIST_DIR}")
set(GS_DEB_OUT "${CMAKE_BINARY_DIR}/debian")
set(GS_DEB_MAINTAINER "The gcsnap authors <gcsnap@users.noreply.github.com>")

# The per-package documents Debian requires: copyright (the LICENSE, in
# the machine-readable format) and changelog.Debian.gz.
file(READ "${CMAKE_SOURCE_DIR}/LICENSE" GS_LICENSE_TEXT)
string(STRIP "${GS_LICENSE_TEXT}" GS_LICENSE_TEXT)
string(REGEX REPLACE "\n\n" "\n.\n" GS_LICENSE_TEXT "${GS_LICENSE_TEXT}")
string(REGEX REPLACE "\n" "\n " GS_LICENSE_TEXT " ${GS_LICENSE_TEXT}")
configure_file("${GS_DEB_DIR}/copyright.in" "${GS_DEB_OUT}/copyright" @ONLY)
string(TIMESTAMP DATE "%a, %d %b %Y %H:%M:%S +0000" UTC)
set(VERSION "${PROJECT_VERSION}-1")
set(MAINTAINER "${GS_DEB_MAINTAINER}")

function(gs_deb_docs component package)
  set(PKG "${package}")
  configure_file("${GS_DEB_DIR}/changelog.in" "${GS_DEB_OUT}/${package}/changelog.Debian" @ONLY)
  execute_process(COMMAND gzip -9nf "${GS_DEB_OUT}/${package}/changelog.Debian")
  install(FILES "${GS_DEB_OUT}/copyright" "${GS_DEB_OUT}/${package}/changelog.Debian.gz"
          DESTINATION share/doc/${package} COMPONENT ${component} EXCLUDE_FROM_ALL)
endfunction()
gs_deb_docs(gcsnapd gcsnapd)
gs_deb_docs(gcsnap gcsnap)
gs_deb_docs(agent gcsnap-agent)
if(TARGET mono-profiler-gcsnap)
  gs_deb_docs(mono gcsnap-mono-profiler)
endif()

# The collector's system files, and its maintainer scripts under the names
# dpkg wants.
install(FILES "${GS_DEB_DIR}/gcsnapd.service" DESTINATION /lib/systemd/system
        COMPONENT gcsnapd EXCLUDE_FROM_ALL)
install(FILES "${GS_DEB_DIR}/gcsnapd.conf" DESTINATION /etc/gcsnap
        COMPONENT gcsnapd EXCLUDE_FROM_ALL)
foreach(script postinst prerm postrm)
  configure_file("${GS_DEB_DIR}/gcsnapd.${script}" "${GS_DEB_OUT}/gcsnapd/${script}" COPYONLY)
endforeach()
file(WRITE "${GS_DEB_OUT}/gcsnapd/conffiles" "/etc/gcsnap/gcsnapd.conf\n")

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME gcsnap)
set(CPACK_PACKAGE_VENDOR "The gcsnap authors")
set(CPACK_PACKAGE_CONTACT "${GS_DEB_MAINTAINER}")
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL gcsnapd gcsnap agent)
if(TARGET mono-profiler-gcsnap)
  list(APPEND CPACK_COMPONENTS_ALL mono)
endif()
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)

set(CPACK_DEBIAN_GCSNAPD_PACKAGE_NAME gcsnapd)
# libpq and libcurl are opened when first needed (gs_dl.h), out of
# dpkg-shlibdeps' sight: said by hand, by the packages holding their sonames.
set(CPACK_DEBIAN_GCSNAPD_PACKAGE_DEPENDS "passwd, libpq5")
set(CPACK_DEBIAN_GCSNAPD_PACKAGE_CONTROL_EXTRA
    "${GS_DEB_OUT}/gcsnapd/postinst;${GS_DEB_OUT}/gcsnapd/prerm;${GS_DEB_OUT}/gcsnapd/postrm;${GS_DEB_OUT}/gcsnapd/conffiles")
set(CPACK_COMPONENT_GCSNAPD_DESCRIPTION "collector of GC heap snapshots (daemon)
gcsnapd receives GC heap snapshots streamed by gcsnap agents, validates,
stores and analyses them, and serves them over an HTTP API with a web
console and Prometheus metrics. Runs as the gcsnapd systemd service.")
set(CPACK_DEBIAN_GCSNAP_PACKAGE_NAME gcsnap)
set(CPACK_DEBIAN_GCSNAP_PACKAGE_DEPENDS "libpq5, libcurl4")
set(CPACK_COMPONENT_GCSNAP_DESCRIPTION "GC heap snapshot tool (command line)
gcsnap validates, summarizes, converts and analyses GC heap snapshots
(dominators, paths, diffs, trends, HTML reports) and talks to a gcsnapd
collector: devices, snapshots, captures, schedules and device keys.")
set(CPACK_DEBIAN_AGENT_PACKAGE_NAME gcsnap-agent)
set(CPACK_COMPONENT_AGENT_DESCRIPTION "GC heap snapshot agent
gcsnap-agent captures a garbage-collected heap as a snapshot, writes it
to a file or streams it to a gcsnapd collector when asked.")
# The module links no Mono library (the mono executable exports the API),
# so dpkg-shlibdeps cannot see that it needs Mono: said by hand.
set(CPACK_DEBIAN_MONO_PACKAGE_NAME gcsnap-mono-profiler)
set(CPACK_DEBIAN_MONO_PACKAGE_DEPENDS "mono-runtime")
# A library in the linker's path: ldconfig runs on install and removal.
file(WRITE "${GS_DEB_OUT}/mono/triggers" "activate-noawait ldconfig\n")
set(CPACK_DEBIAN_MONO_PACKAGE_CONTROL_EXTRA "${GS_DEB_OUT}/mono/triggers")
set(CPACK_COMPONENT_MONO_DESCRIPTION "GC heap snapshots of Mono programs (profiler module)
libmono-profiler-gcsnap lets gcsnap-agent --source mono:PATH capture the heap
of a program started as mono --profile=gcsnap:socket=PATH app.exe.")
include(CPack)
