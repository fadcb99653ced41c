(function(){
  var box = document.getElementById('only-disagreements');
  function apply(on){
    document.querySelectorAll('[data-verdict]').forEach(function(el){
      if (el.tagName.toLowerCase() === 'g') return;  // the dot plots keep every cell
      el.hidden = on && ['differs', 'not held'].indexOf(el.getAttribute('data-verdict')) < 0;
    });
    document.querySelectorAll('[data-disagreements]').forEach(function(el){
      el.hidden = on && el.getAttribute('data-disagreements') === '0';
    });
    document.body.classList.toggle('filtered', on);
  }
  box.addEventListener('change', function(){
    apply(box.checked);
    history.replaceState(null, '', box.checked ? '#only-disagreements' : location.pathname);
  });
  var want = location.hash === '#only-disagreements' || /[?&]only=disagreements/.test(location.search);
  box.checked = want;
  apply(want);
})();
