dnl The shmring extension: Shmring\Ring over libshmring's reader API.
dnl
dnl   phpize && ./configure --with-shmring[=DIR] && make && make install
dnl
dnl DIR is the prefix libshmring is installed under (DIR/include/shmring.h,
dnl DIR/lib/libshmring.so); without it, the compiler's default paths and
dnl CPPFLAGS/LDFLAGS are searched (the CMake build passes its in-tree include
dnl and library directories that way).

PHP_ARG_WITH([shmring],
  [for shmring support],
  [AS_HELP_STRING([[--with-shmring[=DIR]]],
    [Include shmring support (DIR: libshmring's install prefix)])])

if test "$PHP_SHMRING" != "no"; then
  if test "$PHP_SHMRING" != "yes"; then
    if test ! -r "$PHP_SHMRING/include/shmring.h"; then
      AC_MSG_ERROR([shmring.h not found in $PHP_SHMRING/include])
    fi
    PHP_ADD_INCLUDE([$PHP_SHMRING/include])
    SHMRING_LIBDIR="$PHP_SHMRING/$PHP_LIBDIR"
    if test ! -d "$SHMRING_LIBDIR" && test -d "$PHP_SHMRING/lib"; then
      SHMRING_LIBDIR="$PHP_SHMRING/lib"
    fi
  fi

  SHMRING_SAVED_CPPFLAGS=$CPPFLAGS
  if test "$PHP_SHMRING" != "yes"; then
    CPPFLAGS="$CPPFLAGS -I$PHP_SHMRING/include"
  fi
  AC_CHECK_HEADER([shmring.h], [], [AC_MSG_ERROR([shmring.h not found: pass --with-shmring=DIR or CPPFLAGS=-I...])])
  CPPFLAGS=$SHMRING_SAVED_CPPFLAGS

  if test -n "$SHMRING_LIBDIR"; then
    PHP_CHECK_LIBRARY([shmring], [shmring_nodes],
      [PHP_ADD_LIBRARY_WITH_PATH([shmring], [$SHMRING_LIBDIR], [SHMRING_SHARED_LIBADD])],
      [AC_MSG_ERROR([libshmring with shmring_nodes() not found in $SHMRING_LIBDIR])],
      [-L$SHMRING_LIBDIR])
  else
    PHP_CHECK_LIBRARY([shmring], [shmring_nodes],
      [PHP_ADD_LIBRARY([shmring], [1], [SHMRING_SHARED_LIBADD])],
      [AC_MSG_ERROR([libshmring with shmring_nodes() not found: pass --with-shmring=DIR or LDFLAGS=-L...])])
  fi

  PHP_SUBST([SHMRING_SHARED_LIBADD])
  AC_DEFINE([HAVE_SHMRING], [1], [Whether shmring is enabled])
  PHP_NEW_EXTENSION([shmring], [shmring.c], [$ext_shared])
fi
